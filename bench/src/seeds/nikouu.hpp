#pragma once
// nikouu's HttpClientBenchmarking (.NET 8): GET of N weather records at 10, 100, 1,000 and 10,000, read in
// each of HttpClient's nine ways and deserialized into a new List<WeatherForecast>, against GetAsync +
// ReadAsStringAsync. Its API was an ASP.NET Core minimal API: every answer serialized anew and sent
// chunked, so the rows run with the server in seed mode.
//
// What each method does with the bytes, where the write-up does not say, is .NET 8's behaviour:
//   - GetAsync without ResponseHeadersRead buffers the whole content (LoadIntoBufferAsync, a MemoryStream
//     grown as it fills: chunked answers give it no size) before it returns;
//   - ReadAsStringAsync buffers the content if it is not yet, then decodes it into one new string; so
//     ResponseHeadersRead changes nothing for it (the seed's Alloc Ratio 1.00 at every size);
//   - ReadAsStreamAsync after ResponseHeadersRead, and GetStreamAsync, hand back the connection's stream;
//     JsonSerializer.DeserializeAsync (also behind ReadFromJsonAsync and GetFromJsonAsync) reads it
//     through a pooled window and builds new records as the bytes arrive;
//   - GetStringAsync (.NET 5 and later) reads after the headers into an ArrayPool buffer, then decodes one
//     string of exactly the body's size.
// Published figures: Ratio, RatioSD and Alloc Ratio as printed in the write-up's table (.NET 8 results).
// Rows with beyond_seed do what no method of the seed does (records reused, a whole body parsed from a
// kept buffer); they carry no published figure.
#include <array>

#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::seeds {

inline constexpr std::string_view kNikouuBufferedDiffers =
    "DeserializeAsync copies the buffered content through its 16 KiB window and parses it piece by piece; here "
    "the buffer is padded and parsed in place in one pass (all bytes are in: reading piecewise overlaps nothing)";
inline constexpr std::string_view kNikouuStreamedSame =
    "read from the connection after the head; each record parsed once the receive that completes it is in, into "
    "fresh records of a list made anew";
inline constexpr std::string_view kNikouuStreamedDiffers =
    "the body lands whole in one padded buffer kept across requests (grown to the largest body, de-chunked in "
    "place), and after each receive the records complete so far are parsed as one document; DeserializeAsync "
    "reads through a pooled 16 KiB window and never holds the whole body";

inline constexpr std::array kNikouuRows{
    SeedRow{.method = "GetAsync_ReadAsStringAsync", .strategy = "string_copy",
            .published_ratio = {1.00, 1.00, 1.00, 1.00}, .published_ratio_sd = {0.00, 0.00, 0.00, 0.00},
            .published_alloc_ratio = {1.00, 1.00, 1.00, 1.00},
            .beyond_seed = false,
            .same = "the whole body buffered in storage that grows as it fills (chunked: no size to start from), "
                    "made a string, deserialized into fresh records",
            .differs = "the buffered content and the string are one std::string, then copied once into a padded "
                       "string for simdjson; .NET decodes UTF-8 into a UTF-16 string and transcodes it back"},
    SeedRow{.method = "GetAsync_ReadAsStreamAsync", .strategy = "buffered_stream",
            .published_ratio = {0.98, 0.98, 1.05, 0.96}, .published_ratio_sd = {0.02, 0.01, 0.02, 0.04},
            .published_alloc_ratio = {0.70, 0.57, 0.67, 0.54},
            .beyond_seed = false,
            .same = "GetAsync buffers the whole content in a stream that grows as it fills; the stream over that "
                    "buffer is deserialized into fresh records, with no string between",
            .differs = kNikouuBufferedDiffers},
    SeedRow{.method = "GetAsync_ReadFromJsonAsync", .strategy = "buffered_stream",
            .published_ratio = {1.00, 1.01, 1.04, 0.96}, .published_ratio_sd = {0.02, 0.03, 0.01, 0.04},
            .published_alloc_ratio = {0.75, 0.58, 0.67, 0.54},
            .beyond_seed = false,
            .same = "ReadFromJsonAsync is DeserializeAsync over the content's stream, and without "
                    "ResponseHeadersRead GetAsync has buffered that content whole: GetAsync_ReadAsStreamAsync's "
                    "mechanism (the seed's figures agree within 0.05)",
            .differs = kNikouuBufferedDiffers},
    SeedRow{.method = "GetAsync_ReadAsStringAsync_CompletionOption", .strategy = "string_copy",
            .published_ratio = {0.99, 1.00, 1.01, 0.98}, .published_ratio_sd = {0.02, 0.01, 0.01, 0.04},
            .published_alloc_ratio = {1.00, 1.00, 1.00, 1.00},
            .beyond_seed = false,
            .same = "ReadAsStringAsync buffers the whole content before decoding it, head read first or not: the "
                    "baseline's mechanism (the seed's Alloc Ratio is 1.00 at every size)",
            .differs = "as GetAsync_ReadAsStringAsync: ringlab runs the baseline's row twice"},
    SeedRow{.method = "GetAsync_ReadAsStreamAsync_CompletionOption", .strategy = "streaming_array_fresh",
            .published_ratio = {0.99, 0.97, 0.79, 0.71}, .published_ratio_sd = {0.02, 0.01, 0.01, 0.03},
            .published_alloc_ratio = {0.54, 0.24, 0.13, 0.13},
            .beyond_seed = false, .same = kNikouuStreamedSame, .differs = kNikouuStreamedDiffers},
    SeedRow{.method = "GetAsync_ReadFromJsonAsync_CompletionOption", .strategy = "streaming_array_fresh",
            .published_ratio = {1.01, 0.97, 0.80, 0.71}, .published_ratio_sd = {0.03, 0.01, 0.02, 0.03},
            .published_alloc_ratio = {0.59, 0.25, 0.13, 0.13},
            .beyond_seed = false, .same = kNikouuStreamedSame, .differs = kNikouuStreamedDiffers},
    SeedRow{.method = "GetStreamAsync", .strategy = "streaming_array_fresh",
            .published_ratio = {1.00, 0.97, 0.78, 0.70}, .published_ratio_sd = {0.02, 0.01, 0.01, 0.03},
            .published_alloc_ratio = {0.52, 0.23, 0.13, 0.13},
            .beyond_seed = false, .same = kNikouuStreamedSame, .differs = kNikouuStreamedDiffers},
    SeedRow{.method = "GetStringAsync", .strategy = "pooled_string",
            .published_ratio = {0.99, 0.99, 1.11, 0.96}, .published_ratio_sd = {0.02, 0.01, 0.12, 0.04},
            .published_alloc_ratio = {0.85, 0.67, 0.46, 0.59},
            .beyond_seed = false,
            .same = "read after the head into a buffer kept across requests (.NET: rented from ArrayPool), then "
                    "one string of exactly the body's size, deserialized into fresh records",
            .differs = "the string is UTF-8 with simdjson's 64 bytes of padding, parsed where it is; .NET's is "
                       "UTF-16, transcoded back for the parse. exact_string (reserved to Content-Length) does this "
                       "only when the server sends a Content-Length, which the seed's did not"},
    SeedRow{.method = "GetFromJsonAsync", .strategy = "streaming_array_fresh",
            .published_ratio = {0.99, 1.02, 0.80, 0.70}, .published_ratio_sd = {0.02, 0.03, 0.02, 0.03},
            .published_alloc_ratio = {0.66, 0.26, 0.13, 0.13},
            .beyond_seed = false, .same = kNikouuStreamedSame, .differs = kNikouuStreamedDiffers},
    // Beyond the seed: what the streamed methods would cost if they did not build their records anew, and
    // the whole-body forms of the same read.
    SeedRow{.method = "GetFromJsonAsync", .strategy = "streaming_array", .beyond_seed = true,
            .same = "parsed record by record as the bytes arrive, as GetFromJsonAsync",
            .differs = "the records of the last body are overwritten in place, not built anew: no seed method "
                       "reuses its records"},
    SeedRow{.method = "GetFromJsonAsync", .strategy = "presized_fresh", .beyond_seed = true,
            .same = "read after the head into a buffer kept across requests, fresh records",
            .differs = "the whole body is received before any record is parsed: no seed method holds the body in "
                       "a pooled buffer and parses it afterwards"},
    SeedRow{.method = "GetFromJsonAsync", .strategy = "presized", .beyond_seed = true,
            .same = "read after the head into a buffer kept across requests",
            .differs = "the whole body received first, and the records reused in place: no allocation per request "
                       "in steady state, which no seed method reaches"},
    SeedRow{.method = "GetFromJsonAsync", .strategy = "views", .beyond_seed = true,
            .same = "read after the head into a buffer kept across requests",
            .differs = "records of string_views into the body: System.Text.Json has no such records"},
};


}  // namespace ringlab::bench::seeds

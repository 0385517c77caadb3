// The results folder: results/<UTC timestamp>/report.<format>, never overwriting a run.
#include "ringlab/bench/report/reporters.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <system_error>

namespace ringlab::bench {

std::string results_folder_name(long long unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}_{:02}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

Result<std::filesystem::path> create_results_folder(const std::filesystem::path& root, std::string_view suffix,
                                                    long long unix_seconds) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return fail(fmt::format("create {}: {}", root.string(), ec.message()));
  const std::string base = results_folder_name(unix_seconds) + std::string(suffix);
  for (int attempt = 1; attempt < 1000; ++attempt) {
    fs::path folder = root / (attempt == 1 ? base : fmt::format("{}-{}", base, attempt));
    if (fs::create_directory(folder, ec)) return folder;
    if (ec) return fail(fmt::format("create {}: {}", folder.string(), ec.message()));
  }
  return fail(fmt::format("create {}/{}: every suffix up to 999 exists", root.string(), base));
}

Status write_text_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail(errno_message("open", path.string(), errno));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return fail(errno_message("write", path.string(), errno));
  return {};
}

Result<std::vector<std::filesystem::path>> write_reports(const Report& report, const std::filesystem::path& root,
                                                         const std::vector<Format>& formats, long long unix_seconds) {
  auto folder = create_results_folder(root, "", unix_seconds);
  if (!folder) return std::unexpected(folder.error());
  return write_reports_into(report, *folder, formats);
}

Result<std::vector<std::filesystem::path>> write_reports_into(const Report& report, const std::filesystem::path& folder,
                                                              const std::vector<Format>& formats) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return fail(fmt::format("create {}: {}", folder.string(), ec.message()));
  std::vector<fs::path> written;
  for (Format format : formats) {
    const fs::path path = folder / format_file_name(format);
    std::string text;
    switch (format) {
      case Format::md: text = render_markdown(report); break;
      case Format::csv: text = render_csv(report); break;
      case Format::json: text = render_json(report); break;
      case Format::gbench: text = render_gbench(report); break;
      case Format::html: text = render_html(report); break;
    }
    if (auto done = write_text_file(path, text); !done) return std::unexpected(done.error());
    written.push_back(path);
  }
  return written;
}

}  // namespace ringlab::bench

// main() for a fuzz target built without libFuzzer (the normal build, any compiler): runs every file
// of the corpus folders or files given, then a fixed number of deterministic mutations of them, so
// that ctest catches a regression in seconds without clang. tools/fuzz runs the real fuzzer.
//
// Usage: fuzz_TARGET [--runs N] PATH...   (exit 0; a finding aborts inside the target)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void run(const std::string& input) {
  // A copy of exactly the input's size: a read past its end is an ASan report.
  std::vector<uint8_t> bytes(input.begin(), input.end());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

// Bytes that matter to HTTP framing, for insertions.
constexpr std::string_view kInteresting = "\r\n;:= \t0123456789abcdefxX\"\\\x00\x7f\xff";

}  // namespace

int main(int argc, char** argv) {
  uint64_t runs = 0;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::strtoull(argv[++i], nullptr, 10);
      continue;
    }
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) inputs.push_back(read_all(entry.path()));
      }
    } else {
      inputs.push_back(read_all(path));
    }
  }
  if (inputs.empty()) inputs.emplace_back();
  for (const std::string& input : inputs) run(input);

  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (uint64_t i = 0; i < runs; ++i) {
    std::string input = inputs[i % inputs.size()];
    for (uint64_t edits = 1 + next() % 4; edits > 0; --edits) {
      const std::size_t at = input.empty() ? 0 : next() % input.size();
      switch (next() % 4) {
        case 0:
          if (!input.empty()) input[at] = static_cast<char>(next());
          break;
        case 1:
          input.insert(at, 1, kInteresting[next() % kInteresting.size()]);
          break;
        case 2:
          input.erase(at, 1 + next() % 8);
          break;
        case 3:
          input.insert(at, input.substr(at, 1 + next() % 16));
          break;
      }
    }
    run(input);
  }
  std::printf("%zu corpus inputs and %llu mutations run\n", inputs.size(), static_cast<unsigned long long>(runs));
  return 0;
}

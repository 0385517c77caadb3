// libcurl (peer): what a C or C++ program usually links, its easy interface: curl_easy_perform runs each
// request on the easy handle made at setup (curl_peer.hpp has the rest: connection reuse, where the body
// lands, copies, deadlines, what is counted).
#include "curl_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

class Libcurl final : public CurlPeer {
  using CurlPeer::CurlPeer;

  [[nodiscard]] std::string_view interface_name() const noexcept override { return "libcurl"; }
  Result<CURLcode> perform(std::chrono::steady_clock::time_point) override { return curl_easy_perform(easy()); }
};

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_libcurl(const Recipe& recipe) {
  return std::make_unique<Libcurl>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail

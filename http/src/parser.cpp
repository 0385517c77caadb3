// ResponseParser and RequestParser (parser.hpp): thin owners of the Machine that does the work
// (parser_machine.hpp and the files it names).
#include "ringlab/http/parser.hpp"

#include <memory>

#include "parser_callbacks.hpp"
#include "parser_checks.hpp"
#include "parser_fields.hpp"
#include "parser_machine.hpp"

namespace ringlab::http {

// ---- ResponseParser

struct ResponseParser::Impl final : Machine<ResponseHead> {
  using Machine::Machine;
};

ResponseParser::ResponseParser(const ParserLimits& limits) : impl_(std::make_unique<Impl>(limits)) {}
ResponseParser::~ResponseParser() = default;
void ResponseParser::expect_no_body(bool no_body) { impl_->expect_no_body(no_body); }
Result<std::size_t> ResponseParser::feed(std::string_view bytes, ResponseHandler& handler) {
  return impl_->feed(bytes, handler);
}
Status ResponseParser::finish(ResponseHandler& handler) { return impl_->finish(handler); }
Status ResponseParser::detach() { return impl_->detach(); }
void ResponseParser::reset() { impl_->reset(); }
bool ResponseParser::in_message() const noexcept { return impl_->in_message(); }

// ---- RequestParser

struct RequestParser::Impl final : Machine<RequestHead> {
  using Machine::Machine;
};

RequestParser::RequestParser(const ParserLimits& limits) : impl_(std::make_unique<Impl>(limits)) {}
RequestParser::~RequestParser() = default;
Result<std::size_t> RequestParser::feed(std::string_view bytes, RequestHandler& handler) {
  return impl_->feed(bytes, handler);
}
Status RequestParser::finish(RequestHandler& handler) { return impl_->finish(handler); }
Status RequestParser::detach() { return impl_->detach(); }
void RequestParser::reset() { impl_->reset(); }
bool RequestParser::in_message() const noexcept { return impl_->in_message(); }

}  // namespace ringlab::http

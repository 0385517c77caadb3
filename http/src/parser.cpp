// ResponseParser and RequestParser (parser.hpp): both are MessageParser, a thin owner of the
// Machine that does the work (parser_machine.hpp and the files it names).
#include "ringlab/http/parser.hpp"

#include <memory>

#include "parser_callbacks.hpp"
#include "parser_checks.hpp"
#include "parser_fields.hpp"
#include "parser_machine.hpp"

namespace ringlab::http {

template <class Head>
struct MessageParser<Head>::Impl final : Machine<Head> {
  using Machine<Head>::Machine;
};

template <class Head>
MessageParser<Head>::MessageParser(const ParserLimits& limits) : impl_(std::make_unique<Impl>(limits)) {}
template <class Head>
MessageParser<Head>::~MessageParser() = default;
template <class Head>
void MessageParser<Head>::expect_no_body(bool no_body)
  requires std::is_same_v<Head, ResponseHead>
{
  impl_->expect_no_body(no_body);
}
template <class Head>
Result<std::size_t> MessageParser<Head>::feed(std::string_view bytes, MessageHandler<Head>& handler) {
  return impl_->feed(bytes, handler);
}
template <class Head>
Status MessageParser<Head>::finish(MessageHandler<Head>& handler) {
  return impl_->finish(handler);
}
template <class Head>
Status MessageParser<Head>::detach() {
  return impl_->detach();
}
template <class Head>
void MessageParser<Head>::reset() {
  impl_->reset();
}
template <class Head>
bool MessageParser<Head>::in_message() const noexcept {
  return impl_->in_message();
}

template class MessageParser<ResponseHead>;
template class MessageParser<RequestHead>;

}  // namespace ringlab::http

#include "ringlab/net/error.hpp"

#include "ringlab/base/errno_text.hpp"

namespace ringlab::net {

std::string Error::message() const { return base::errno_message(op, peer, code); }

}  // namespace ringlab::net

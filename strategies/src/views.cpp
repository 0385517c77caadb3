// views: as presized, but the records are views (json::WeatherView, RepositoryView): their strings are
// string_views into the body buffer, escapes left as they are (a verified op's checksum decodes them on
// the fly).
// No allocation per record, whatever N: the view vectors keep their capacity across requests. It is
// PresizedStrategy (client_strategy.hpp) with viewing models.
#include "client_strategy.hpp"
#include "factories.hpp"

namespace ringlab::strategies::detail {

std::unique_ptr<Strategy> make_views() { return std::make_unique<PresizedStrategy<ViewModels>>("views"); }

}  // namespace ringlab::strategies::detail

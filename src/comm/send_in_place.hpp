// Sending a large closure message without building it on the stack first:
// reserves its room in the aggregation buffer and lets the caller fill the
// fields and payload there (one copy of the payload instead of two, and no
// zeroing of an unused tail). For the bulk paths of collective.cpp and
// range_transfer.cpp.
#pragma once

#include "shoal/message.hpp"

#include <new>

namespace shoal::detail {

/// Stages one message of closure type F (trivially copyable, trivially
/// default-constructible) to global core `dest` and returns it for the
/// caller to fill before its next send or flush. May suspend the calling
/// worker (back-pressure) like send().
template <message_handler_like F>
F* stage_in_place(int dest) {
  static_assert(std::is_trivially_default_constructible_v<F>);
  SHOAL_ASSERT(tls_aggregator != nullptr, "shoal: a message staged outside a shoal core");
  char* p = tls_aggregator->reserve_closure(dest, to_handler_id(&invoke_closures<F>),
                                            padded_closure_bytes<F>);
  return new (p) F;  // trivial: leaves the bytes for the caller to write
}

}  // namespace shoal::detail

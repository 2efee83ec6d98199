// SPDX-License-Identifier: BSD-3-Clause
// The endpoint's libfabric ops tables (C ABI), defined in ep_ops.cpp.
#pragma once

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

namespace hashi::fi {

extern fi_ops_ep ep_base_ops;
extern fi_ops_cm ep_cm_ops;
extern fi_ops_msg ep_msg_ops;
extern fi_ops_tagged ep_tagged_ops;
extern fi_ops_rma ep_rma_ops;
extern fi_ops_atomic ep_atomic_ops;

} // namespace hashi::fi

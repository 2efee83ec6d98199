/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hashi's frame header as the module reads it: 56 bytes, little-endian,
 * the layout of src/transport/wire/frame.hpp (type, flags, two reserved
 * zero bytes, sequence number, payload length, tag, CQ data, three
 * type-specific words). The module takes eager messages (msg, tagged) and
 * leaves every other type to user space.
 */
#ifndef O2G_FRAME_H
#define O2G_FRAME_H

#include <linux/types.h>

#define O2G_FRAME_HEADER_SIZE 56
#define O2G_FRAME_MAX_EAGER (1u << 20)	/* wire::max_eager_payload */

enum o2g_frame_type {
	O2G_FRAME_HELLO = 1,
	O2G_FRAME_MSG = 3,	/* untagged message, payload inline */
	O2G_FRAME_TAGGED = 4,	/* tagged message, payload inline */
	O2G_FRAME_RTS = 5,	/* rendezvous request: a = message bytes, b = sender op id */
	O2G_FRAME_PROOF = 14,	/* the highest type defined */
};

#define O2G_FRAME_FLAG_REMOTE_DATA 1	/* wire::flag_remote_data */
#define O2G_FRAME_FLAG_TAGGED 2		/* wire::flag_tagged: (rts) a tagged message */

struct o2g_frame {
	u8 type;
	u8 flags;
	u32 seq;
	u64 length;
	u64 tag;
	u64 data;
	u64 a;			/* rts: the message's length */
	u64 b;			/* rts: the sender's op id */
};

enum o2g_frame_verdict {
	O2G_FRAME_EAGER,	/* a msg or tagged frame the module delivers */
	O2G_FRAME_RENDEZVOUS,	/* a tagged rts frame the module matches (no payload) */
	O2G_FRAME_UNSUPPORTED,	/* a valid type the module does not take */
	O2G_FRAME_BAD,		/* not a header at all */
};

enum o2g_frame_verdict o2g_frame_decode(const u8 *bytes, struct o2g_frame *out);

#endif /* O2G_FRAME_H */

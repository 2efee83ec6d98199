// SPDX-License-Identifier: GPL-2.0-only
/*
 * Decoding and checking a frame header (o2g_frame.h), with the bounds of
 * the user-space decoder (src/transport/wire/frame.cpp) for the types the
 * module takes. Pure: any context.
 */
#include <asm/unaligned.h>

#include "o2g_frame.h"

enum o2g_frame_verdict o2g_frame_decode(const u8 *bytes, struct o2g_frame *out)
{
	out->type = bytes[0];
	out->flags = bytes[1];
	out->seq = get_unaligned_le32(bytes + 4);
	out->length = get_unaligned_le64(bytes + 8);
	out->tag = get_unaligned_le64(bytes + 16);
	out->data = get_unaligned_le64(bytes + 24);
	out->a = get_unaligned_le64(bytes + 32);
	out->b = get_unaligned_le64(bytes + 40);

	if (out->type < O2G_FRAME_HELLO || out->type > O2G_FRAME_PROOF)
		return O2G_FRAME_BAD;
	if (bytes[2] || bytes[3])
		return O2G_FRAME_BAD;
	if (out->type == O2G_FRAME_RTS && (out->flags & O2G_FRAME_FLAG_TAGGED)) {
		/* As wire::decode_header: these two flags, and no payload. */
		if (out->flags & ~(O2G_FRAME_FLAG_REMOTE_DATA | O2G_FRAME_FLAG_TAGGED) || out->length)
			return O2G_FRAME_BAD;
		return O2G_FRAME_RENDEZVOUS;
	}
	if (out->type != O2G_FRAME_MSG && out->type != O2G_FRAME_TAGGED)
		return O2G_FRAME_UNSUPPORTED;
	if (out->flags & ~O2G_FRAME_FLAG_REMOTE_DATA)
		return O2G_FRAME_BAD;
	if (out->length > O2G_FRAME_MAX_EAGER)
		return O2G_FRAME_BAD;
	return O2G_FRAME_EAGER;
}

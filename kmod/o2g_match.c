// SPDX-License-Identifier: GPL-2.0-only
/*
 * The matching engine (o2g_match.h). Context lock held in every function.
 */
#include "include/uapi/o2g.h"
#include "o2g_match.h"

static bool o2g_accepts(u64 want_source, u64 want_tag, u64 ignore, u64 msg_source, u64 msg_tag)
{
	return (want_source == O2G_ANY_SOURCE || want_source == msg_source) &&
	       ((want_tag ^ msg_tag) & ~ignore) == 0;
}

void o2g_matcher_init(struct o2g_matcher *m)
{
	INIT_LIST_HEAD(&m->posted);
	INIT_LIST_HEAD(&m->arrival);
	INIT_LIST_HEAD(&m->claimed);
	m->posted_count = 0;
	m->unexpected_count = 0;
}

struct o2g_posted *o2g_match_find_posted(struct o2g_matcher *m, u64 source, u64 tag)
{
	struct o2g_posted *p;

	list_for_each_entry(p, &m->posted, link)
		if (o2g_accepts(p->source, p->tag, p->ignore, source, tag))
			return p;
	return NULL;
}

struct o2g_posted *o2g_match_posted_by_cookie(struct o2g_matcher *m, u64 cookie)
{
	struct o2g_posted *p;

	list_for_each_entry(p, &m->posted, link)
		if (p->cookie == cookie)
			return p;
	return NULL;
}

struct o2g_posted *o2g_match_first_posted_for(struct o2g_matcher *m, u64 source)
{
	struct o2g_posted *p;

	if (source == O2G_ANY_SOURCE)
		return NULL;	/* wildcard receives stay when a peer fails */
	list_for_each_entry(p, &m->posted, link)
		if (p->source == source)
			return p;
	return NULL;
}

void o2g_match_queue_posted(struct o2g_matcher *m, struct o2g_posted *p)
{
	list_add_tail(&p->link, &m->posted);
	m->posted_count++;
}

void o2g_match_unlink_posted(struct o2g_matcher *m, struct o2g_posted *p)
{
	list_del_init(&p->link);
	m->posted_count--;
}

struct o2g_unexpected *o2g_match_find_unexpected(struct o2g_matcher *m, u64 source, u64 tag,
						 u64 ignore)
{
	struct o2g_unexpected *u;

	list_for_each_entry(u, &m->arrival, link)
		if (o2g_accepts(source, tag, ignore, u->source, u->tag))
			return u;
	return NULL;
}

void o2g_match_queue_unexpected(struct o2g_matcher *m, struct o2g_unexpected *u)
{
	u->claimed = false;
	list_add_tail(&u->link, &m->arrival);
	m->unexpected_count++;
}

void o2g_match_unlink_unexpected(struct o2g_matcher *m, struct o2g_unexpected *u)
{
	list_del_init(&u->link);
	m->unexpected_count--;
}

struct o2g_unexpected *o2g_match_claimed_by(struct o2g_matcher *m, u64 claim_cookie)
{
	struct o2g_unexpected *u;

	list_for_each_entry(u, &m->claimed, link)
		if (u->claim_cookie == claim_cookie)
			return u;
	return NULL;
}

void o2g_match_reserve(struct o2g_matcher *m, struct o2g_unexpected *u, u64 claim_cookie)
{
	/* One reservation per cookie: a second peek-with-claim is a plain peek. */
	if (o2g_match_claimed_by(m, claim_cookie))
		return;
	list_move_tail(&u->link, &m->claimed);
	u->claimed = true;
	u->claim_cookie = claim_cookie;
}

static bool o2g_cookie_listed(const u64 *cookies, u32 count, u64 cookie)
{
	u32 i;

	for (i = 0; i < count; i++)
		if (cookies[i] == cookie)
			return true;
	return false;
}

void o2g_match_renumber(struct o2g_matcher *m, const u64 *cookies, u32 count, u64 source)
{
	struct o2g_unexpected *u;

	/*
	 * One arrival list for every source, so a renumbered message keeps its
	 * place in arrival order by staying where it is.
	 */
	if (source == O2G_ANY_SOURCE)
		return;
	list_for_each_entry(u, &m->arrival, link)
		if (u->source == O2G_ANY_SOURCE && o2g_cookie_listed(cookies, count, u->cookie))
			u->source = source;
	list_for_each_entry(u, &m->claimed, link)
		if (u->source == O2G_ANY_SOURCE && o2g_cookie_listed(cookies, count, u->cookie))
			u->source = source;
}

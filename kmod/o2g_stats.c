// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module's counters (o2g_stats.h) and their sysfs files. Any context.
 */
#include <linux/device.h>
#include <linux/kernel.h>

#include "o2g_stats.h"

struct o2g_stats_counters o2g_stats;

void o2g_stats_read(struct o2g_counters *out)
{
	memset(out, 0, sizeof(*out));
#define O2G_COUNTER_READ(name) out->name = atomic64_read(&o2g_stats.name);
	O2G_COUNTERS(O2G_COUNTER_READ)
#undef O2G_COUNTER_READ
}

#define O2G_COUNTER_SHOW(name)							\
	static ssize_t name##_show(struct device *dev,				\
				   struct device_attribute *attr, char *buf)	\
	{									\
		return sysfs_emit(buf, "%lld\n",				\
				  (long long)atomic64_read(&o2g_stats.name));	\
	}									\
	static DEVICE_ATTR_RO(name);
O2G_COUNTERS(O2G_COUNTER_SHOW)
#undef O2G_COUNTER_SHOW

static struct attribute *o2g_counter_attrs[] = {
#define O2G_COUNTER_ATTR(name) &dev_attr_##name.attr,
	O2G_COUNTERS(O2G_COUNTER_ATTR)
#undef O2G_COUNTER_ATTR
	NULL,
};

static const struct attribute_group o2g_counter_group = {
	.name = "counters",
	.attrs = o2g_counter_attrs,
};

const struct attribute_group *o2g_stats_groups[] = {
	&o2g_counter_group,
	NULL,
};

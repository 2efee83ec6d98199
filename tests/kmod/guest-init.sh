#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the o2g test VM (tests/kmod/o2g-vm.sh packs it): loads the
# module, runs every check, prints "KMOD-CHECK name PASS|FAIL detail" lines
# on the serial console and powers off. Any path ends in poweroff.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
ip link set lo up
echo 0 > /proc/sys/kernel/printk_ratelimit 2>/dev/null

check() { echo "KMOD-CHECK $1 $2${3:+ $3}"; }
counter() { cat /sys/class/misc/o2g/counters/$1 2>/dev/null || echo missing; }
# The module's state must come back to nothing once its users are gone.
wait_idle() {
    i=0
    while [ "$(counter contexts)" != 0 ] || [ "$(counter pinned_pages)" != 0 ] || [ "$(counter sockets)" != 0 ]; do
        i=$((i + 1)); [ $i -gt 3000 ] && return 1; usleep 10000
    done
}

echo "KMOD-BEGIN kernel $(uname -r)"
if insmod /o2g.ko && [ -c /dev/o2g ]; then
    check insmod PASS "$(grep '^o2g ' /proc/modules)"
else
    check insmod FAIL "insmod /o2g.ko failed or /dev/o2g is missing"
    dmesg | tail -20; poweroff -f
fi
params=$(ls /sys/module/o2g/parameters | tr '\n' ' ')
version=$(cat /sys/module/o2g/version 2>/dev/null)
case "$params" in
*max_posted*pin_cache_pages*) check modinfo PASS "version $version; parameters: $params" ;;
*) check modinfo FAIL "parameters: '$params', version '$version'" ;;
esac

o2g-match-check /match-vectors.txt 20000
o2g-socket-check all
o2g-socket-check kill-9
o2g-fuzz 20
wait_idle && check fuzz-left-nothing PASS || check fuzz-left-nothing FAIL \
    "contexts=$(counter contexts) pinned_pages=$(counter pinned_pages) sockets=$(counter sockets)"

# rmmod while a transfer runs: refused (a context holds the module) and the
# transfer unharmed; once it is over, rmmod must succeed.
o2g-socket-check stream > /tmp/stream.out 2>&1 &
stream=$!
i=0
while [ "$(counter sockets)" = 0 ] || [ "$(counter sockets)" = missing ]; do
    i=$((i + 1)); [ $i -gt 3000 ] && break; usleep 10000
done
if rmmod o2g 2>/tmp/rmmod.err; then
    check rmmod-under-load PASS "rmmod succeeded while in use (clean: see dmesg-clean)"
    under_load_unloaded=1
else
    check rmmod-under-load PASS "refused while a transfer ran: $(cat /tmp/rmmod.err)"
fi
wait $stream
stream_rc=$?
cat /tmp/stream.out
if [ -z "$under_load_unloaded" ]; then
    [ $stream_rc = 0 ] || check stream-during-rmmod FAIL "the transfer failed (exit $stream_rc)"
    wait_idle || check rmmod-clean FAIL "module not idle: contexts=$(counter contexts) pinned_pages=$(counter pinned_pages)"
    if rmmod o2g; then check rmmod-clean PASS; else check rmmod-clean FAIL "rmmod after the transfer failed"; fi
fi

# The DKMS-built module (o2g-vm.sh built it for this kernel) loads and works.
if [ -e /o2g-dkms.ko ]; then
    if insmod /o2g-dkms.ko && o2g-match-check /match-vectors.txt 200 > /tmp/dkms-match.out; then
        check dkms-module-loads PASS "$(grep -c PASS /tmp/dkms-match.out) checks passed with the DKMS build"
    else
        check dkms-module-loads FAIL "$(grep FAIL /tmp/dkms-match.out | head -3)"
    fi
    rmmod o2g
else
    check dkms-module-loads FAIL "no DKMS build in the image"
fi

bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|UBSAN|KASAN|refcount_t|list_del corruption|underflow' | head -5)
if [ -z "$bad" ]; then check dmesg-clean PASS; else check dmesg-clean FAIL "$bad"; fi
dmesg | grep -E 'o2g' | tail -5 | sed 's/^/GUEST-DMESG: /'
echo KMOD-END
poweroff -f

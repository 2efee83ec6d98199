# SPDX-License-Identifier: BSD-3-Clause
# packaging: `make deb` builds hashi, hashi-dev and hashi-relay .debs in
# deb/ from this build's installed tree (make install DESTDIR=deb/stage,
# then packaging/deb/make-debs); nothing is rebuilt, MPICH included. With
# the kernel module's tree (kmod/) present, its own kmod/make-deb.sh adds
# hashi-o2g-dkms (the module's source for DKMS, tested by tests/kmod).
DEB_DIR = $(abs_top_builddir)/deb
DEB_VERSION = $(PACKAGE_VERSION)-1

.PHONY: deb
deb: all
	rm -rf $(DEB_DIR)
	$(MAKE) $(AM_MAKEFLAGS) install DESTDIR=$(DEB_DIR)/stage
	$(top_srcdir)/packaging/deb/make-debs --stage $(DEB_DIR)/stage --prefix $(prefix) \
		--version $(DEB_VERSION) --out $(DEB_DIR) --mpich-copyright $(MPICH_LINK)/source/COPYRIGHT
	rm -rf $(DEB_DIR)/stage $(DEB_DIR)/tree
	if test -x $(top_srcdir)/kmod/make-deb.sh; then $(top_srcdir)/kmod/make-deb.sh $(DEB_DIR); fi

EXTRA_DIST += packaging/deb

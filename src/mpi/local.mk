# SPDX-License-Identifier: BSD-3-Clause
# src/mpi: the distribution itself. The MPICH base, mpiexec, the compiler
# wrappers and hashi-info.

## The MPICH base ###########################################################
# build-mpich builds (or finds in the cache) MPICH from Debian's source
# package and points $(MPICH_LINK) at the cache entry.
MPICH_LINK = $(abs_top_builddir)/mpich
MPICH_BASE = $(MPICH_LINK)/install
# A stamp of our own: the cache entry's files keep their old dates, so they
# cannot tell make that the base is up to date for this build tree.
MPICH_STAMP = $(abs_top_builddir)/mpich.stamp
DISTCLEANFILES = $(MPICH_STAMP)
MPICH_JOBS = `nproc 2>/dev/null || echo 2`
BUILT_SOURCES = $(MPICH_STAMP)
EXTRA_DIST += src/mpi/build-mpich src/mpi/mpich-source.txt src/mpi/mpich-configure-flags.txt \
	src/mpi/on-node-large-messages.md

$(MPICH_STAMP): $(top_srcdir)/src/mpi/mpich-source.txt $(top_srcdir)/src/mpi/mpich-configure-flags.txt
	$(AM_V_GEN)$(top_srcdir)/src/mpi/build-mpich --cache "$(MPICH_CACHE)" --link "$(MPICH_LINK)" --jobs $(MPICH_JOBS)
	@touch $@

MPICH_CPPFLAGS = -I$(MPICH_BASE)/include
MPICH_LIBS = -L$(MPICH_BASE)/lib -lmpi
# Our installed programs find libmpi next to themselves, wherever the tree is.
RELOCATABLE_RPATH = -Wl,-rpath,'$$ORIGIN/../lib' -Wl,--enable-new-dtags

# Installs the base's libraries, headers and MPI function man pages (man3;
# its man1 pages describe Hydra and MPICH's wrappers, not ours) into
# Hashi's prefix.
# The libraries' RUNPATH is pointed at their own directory so nothing
# refers back to the build cache.
install-mpich-base:
	$(MKDIR_P) "$(DESTDIR)$(libdir)" "$(DESTDIR)$(includedir)" "$(DESTDIR)$(pkgdatadir)" "$(DESTDIR)$(mandir)"
	cd "$(MPICH_BASE)/lib" && for f in lib*.so*; do \
	  rm -f "$(DESTDIR)$(libdir)/$$f"; cp -P "$$f" "$(DESTDIR)$(libdir)/$$f" || exit 1; \
	  if test ! -L "$$f"; then $(PATCHELF) --set-rpath '$$ORIGIN' "$(DESTDIR)$(libdir)/$$f" || exit 1; fi; \
	done
	cp -R "$(MPICH_BASE)/include/." "$(DESTDIR)$(includedir)/"
	$(MKDIR_P) "$(DESTDIR)$(mandir)/man3"
	cp "$(MPICH_BASE)"/share/man/man3/*.3 "$(DESTDIR)$(mandir)/man3/"
	$(INSTALL_DATA) "$(MPICH_BASE)/.hashi-configure-flags" "$(DESTDIR)$(pkgdatadir)/mpich-configure-flags"
	$(INSTALL_DATA) "$(MPICH_BASE)/.hashi-mpich-version" "$(DESTDIR)$(pkgdatadir)/mpich-version"

uninstall-mpich-base:
	cd "$(MPICH_BASE)/lib" && for f in lib*.so*; do rm -f "$(DESTDIR)$(libdir)/$$f"; done
	cd "$(MPICH_BASE)/include" && for f in *; do rm -f "$(DESTDIR)$(includedir)/$$f"; done
	cd "$(MPICH_BASE)/share/man/man3" && for f in *.3; do rm -f "$(DESTDIR)$(mandir)/man3/$$f"; done
	rm -f "$(DESTDIR)$(pkgdatadir)/mpich-configure-flags" "$(DESTDIR)$(pkgdatadir)/mpich-version"

## mpiexec's engine (shared with its unit tests) ###########################
noinst_LIBRARIES += libhashi_mpiexec.a
libhashi_mpiexec_a_SOURCES = \
	src/mpi/mpiexec/hostfile.cpp src/mpi/mpiexec/hostfile.hpp \
	src/mpi/mpiexec/slurm_allocation.cpp src/mpi/mpiexec/slurm_allocation.hpp \
	src/mpi/mpiexec/options.cpp src/mpi/mpiexec/options.hpp \
	src/mpi/mpiexec/placement.cpp src/mpi/mpiexec/placement.hpp \
	src/mpi/mpiexec/binding_spec.cpp src/mpi/mpiexec/binding_spec.hpp \
	src/mpi/mpiexec/cpu_topology.cpp src/mpi/mpiexec/cpu_topology.hpp \
	src/mpi/mpiexec/binding_plan.cpp src/mpi/mpiexec/binding_plan.hpp \
	src/mpi/mpiexec/rank_binding.cpp src/mpi/mpiexec/rank_binding.hpp \
	src/mpi/mpiexec/pmi_wire.cpp src/mpi/mpiexec/pmi_wire.hpp \
	src/mpi/mpiexec/pmi_server.cpp src/mpi/mpiexec/pmi_server.hpp \
	src/mpi/mpiexec/launcher.cpp src/mpi/mpiexec/launcher.hpp \
	src/mpi/mpiexec/output_forwarder.cpp src/mpi/mpiexec/output_forwarder.hpp \
	src/mpi/mpiexec/capacity.cpp src/mpi/mpiexec/capacity.hpp \
	src/mpi/mpiexec/secrets.cpp src/mpi/mpiexec/secrets.hpp \
	src/mpi/mpiexec/pmi_auth.cpp src/mpi/mpiexec/pmi_auth.hpp \
	src/mpi/mpiexec/pmi_listener.cpp src/mpi/mpiexec/pmi_listener.hpp \
	src/mpi/mpiexec/shim_handoff.cpp src/mpi/mpiexec/shim_handoff.hpp \
	src/mpi/mpiexec/ssh_shim.cpp src/mpi/mpiexec/ssh_shim.hpp \
	src/mpi/mpiexec/impi_client.cpp src/mpi/mpiexec/impi_client.hpp \
	src/mpi/mpiexec/job.cpp src/mpi/mpiexec/job.hpp
# mpiexec -client speaks IMPI with the protocol library of relay/impi.
libhashi_mpiexec_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(CRYPTO_CFLAGS) $(HWLOC_CFLAGS)

## mpiexec / mpirun #########################################################
bin_PROGRAMS += mpiexec
mpiexec_SOURCES = src/mpi/mpiexec/main.cpp
mpiexec_LDADD = libhashi_mpiexec.a libhashi_impi_proto.a libhashi_common.a $(CRYPTO_LIBS) $(HWLOC_LIBS)

## Compiler wrappers ########################################################
# One program; argv[0] says which language (mpicc, mpicxx, mpifort, ...).
noinst_LIBRARIES += libhashi_wrapper.a
libhashi_wrapper_a_SOURCES = \
	src/mpi/wrappers/wrapper_args.cpp src/mpi/wrappers/wrapper_args.hpp \
	src/mpi/wrappers/fortran_dialect.cpp src/mpi/wrappers/fortran_dialect.hpp
bin_PROGRAMS += mpicc
mpicc_SOURCES = src/mpi/wrappers/compiler_wrapper.cpp
mpicc_LDADD = libhashi_wrapper.a libhashi_common.a
WRAPPER_ALIASES = mpicxx mpic++ mpifort mpif77 mpif90

## hashi-info ###############################################################
bin_PROGRAMS += hashi-info
hashi_info_SOURCES = src/mpi/info/hashi_info.cpp \
	src/mpi/info/kernel_module.cpp src/mpi/info/kernel_module.hpp \
	src/mpi/info/stats_summary.cpp src/mpi/info/stats_summary.hpp \
	src/mpi/info/stats_tcp_table.cpp \
	src/mpi/info/stats_watch.cpp src/mpi/info/stats_watch.hpp
hashi_info_CPPFLAGS = $(AM_CPPFLAGS) $(MPICH_CPPFLAGS) $(FABRIC_CFLAGS) $(HWLOC_CFLAGS)
hashi_info_LDADD = libhashi_common.a $(MPICH_LIBS) $(FABRIC_LIBS) $(HWLOC_LIBS)
hashi_info_LDFLAGS = $(AM_LDFLAGS) $(RELOCATABLE_RPATH)
EXTRA_hashi_info_DEPENDENCIES = $(MPICH_STAMP)

install-exec-hook:
	cd "$(DESTDIR)$(bindir)" && for w in $(WRAPPER_ALIASES); do rm -f $$w; $(LN_S) mpicc $$w; done
	cd "$(DESTDIR)$(bindir)" && rm -f mpirun && $(LN_S) mpiexec mpirun
	$(MKDIR_P) "$(DESTDIR)$(libdir)/hashi/fi"

install-data-local: install-mpich-base
uninstall-local: uninstall-mpich-base
	cd "$(DESTDIR)$(bindir)" && rm -f $(WRAPPER_ALIASES) mpirun

## pkg-config ###############################################################
# hashi.pc, and the names MPICH users query: mpich.pc (Debian's
# libmpich-dev) and mpi.pc, mpi-c.pc, mpi-cxx.pc, mpi-fort.pc (Debian's
# mpi-default-dev). All relocatable (${pcfiledir}), so a tree moved or
# staged with DESTDIR still answers with its own paths.
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = hashi.pc mpich.pc mpi.pc mpi-c.pc mpi-cxx.pc mpi-fort.pc
CLEANFILES += $(pkgconfig_DATA)
EXTRA_DIST += src/mpi/pkgconfig/hashi.pc.in src/mpi/pkgconfig/mpich.pc.in src/mpi/pkgconfig/mpi-lang.pc.in
PC_DIR = $(top_srcdir)/src/mpi/pkgconfig
# The templates' markers are %NAME%: automake would replace @NAME@ itself.
# The MPICH version of the base: the upstream part of the Debian version.
PC_SUBST = sed -e 's|%PACKAGE_VERSION%|$(PACKAGE_VERSION)|g' \
	-e "s|%MPICH_VERSION%|`sed -n 's/^version=\([^-]*\).*/\1/p' $(top_srcdir)/src/mpi/mpich-source.txt`|g" \
	-e 's|%SANITIZE_LIBS%|$(HASHI_SANITIZE_LIBS)|g'
hashi.pc: $(PC_DIR)/hashi.pc.in $(top_srcdir)/src/mpi/mpich-source.txt Makefile
	$(AM_V_GEN)$(PC_SUBST) $(PC_DIR)/hashi.pc.in > $@
mpich.pc: $(PC_DIR)/mpich.pc.in $(top_srcdir)/src/mpi/mpich-source.txt Makefile
	$(AM_V_GEN)$(PC_SUBST) $(PC_DIR)/mpich.pc.in > $@
mpi.pc mpi-c.pc: $(PC_DIR)/mpi-lang.pc.in $(top_srcdir)/src/mpi/mpich-source.txt Makefile
	$(AM_V_GEN)$(PC_SUBST) -e 's|%NAME%|$(@:.pc=)|g' -e 's|%LANG_NOTE%| for C|g' -e 's|%LANG_LIBS%||' \
	  $(PC_DIR)/mpi-lang.pc.in > $@
mpi-cxx.pc: $(PC_DIR)/mpi-lang.pc.in $(top_srcdir)/src/mpi/mpich-source.txt Makefile
	$(AM_V_GEN)$(PC_SUBST) -e 's|%NAME%|mpi-cxx|g' -e 's|%LANG_NOTE%| for C++|g' -e 's|%LANG_LIBS%|-lmpicxx|' \
	  $(PC_DIR)/mpi-lang.pc.in > $@
mpi-fort.pc: $(PC_DIR)/mpi-lang.pc.in $(top_srcdir)/src/mpi/mpich-source.txt Makefile
	$(AM_V_GEN)$(PC_SUBST) -e 's|%NAME%|mpi-fort|g' -e 's|%LANG_NOTE%| for Fortran (mpif.h, use mpi)|g' \
	  -e 's|%LANG_LIBS%|-lmpifort|' $(PC_DIR)/mpi-lang.pc.in > $@

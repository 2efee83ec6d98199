# SPDX-License-Identifier: BSD-3-Clause
# src/transport/secure: the protected byte streams of connections between
# clusters (README.md here). Included from src/transport/local.mk after the
# provider and its unit tests are defined, so both take these sources.

SECURE_SOURCES = \
	src/transport/secure/protection.cpp src/transport/secure/protection.hpp \
	src/transport/secure/key_schedule.cpp src/transport/secure/key_schedule.hpp \
	src/transport/secure/byte_stream.hpp src/transport/secure/iov_cursor.hpp \
	src/transport/secure/send_buffer.cpp src/transport/secure/send_buffer.hpp \
	src/transport/secure/plain_stream.cpp src/transport/secure/plain_stream.hpp \
	src/transport/secure/record_mac.cpp src/transport/secure/record_mac.hpp \
	src/transport/secure/integrity_record.cpp src/transport/secure/integrity_record.hpp \
	src/transport/secure/integrity_stream.cpp src/transport/secure/integrity_stream.hpp \
	src/transport/secure/tls_context.cpp src/transport/secure/tls_context.hpp \
	src/transport/secure/tls_socket_bio.cpp src/transport/secure/tls_socket_bio.hpp \
	src/transport/secure/tls_stream.cpp src/transport/secure/tls_stream.hpp \
	src/transport/secure/open_stream.cpp src/transport/secure/open_stream.hpp

libhashi_fi_la_SOURCES += $(SECURE_SOURCES)
libhashi_fi_la_CPPFLAGS += $(SSL_CFLAGS)
libhashi_fi_la_LIBADD += $(SSL_LIBS)

tests_unit_transport_unit_SOURCES += tests/unit/transport/test_secure.cpp tests/transport/loopback_pair.hpp $(SECURE_SOURCES)
tests_unit_transport_unit_CPPFLAGS += $(SSL_CFLAGS) -I$(top_srcdir)
tests_unit_transport_unit_LDADD += $(SSL_LIBS)
EXTRA_DIST += src/transport/secure/README.md

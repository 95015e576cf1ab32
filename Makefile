# Installs `so` and its built-in stacks:
#   make install PREFIX=/usr/local     # PREFIX/bin/so and PREFIX/share/so/{stacks,compose,compose-jobs,config,container-build}
#   make uninstall PREFIX=/usr/local
# The binary links the Swift runtime statically (runs where no Swift toolchain is installed) and finds its
# stacks in ../share/so beside its real path, wherever PREFIX is. DESTDIR is honoured for packaging.
PREFIX ?= /usr/local
SWIFT ?= swift
# The installed binary is stripped (151 MB -> 80 MB; crash backtraces then show addresses): STRIP=true keeps symbols.
STRIP ?= strip
BINDIR = $(DESTDIR)$(PREFIX)/bin
SHAREDIR = $(DESTDIR)$(PREFIX)/share/so
SHARED = stacks compose compose-jobs config container-build
RELEASE = -c release --static-swift-stdlib

.PHONY: all build install install-bin install-share uninstall

all: build

build:
	$(SWIFT) build $(RELEASE) --product so

install: build install-bin install-share

install-bin:
	install -d "$(BINDIR)"
	install -m 755 "$$($(SWIFT) build $(RELEASE) --show-bin-path)/so" "$(BINDIR)/so"
	$(STRIP) "$(BINDIR)/so"

# Replaces the whole share/so, so files that left the stacks do not linger.
install-share:
	rm -rf "$(SHAREDIR)"
	install -d "$(SHAREDIR)"
	cp -R $(SHARED) "$(SHAREDIR)/"

uninstall:
	rm -f "$(BINDIR)/so"
	rm -rf "$(SHAREDIR)"

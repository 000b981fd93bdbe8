# Release builds of ledger. `make release` builds static binaries for
# linux and darwin on amd64 and arm64 into dist/, with SHA256SUMS beside
# them; `make build` builds ./ledger for this machine the same way.
#
#   -trimpath          no paths of the build machine in the binary
#   -ldflags "-s -w"   no symbol table or DWARF: a third smaller
#   -X main.version    the version, from git (a tag, else the commit;
#                      -dirty when the work tree has changes)
#   CGO_ENABLED=0      SQLite is pure Go (modernc.org/sqlite): no C
#                      toolchain, and one binary runs on any libc

VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST      ?= dist
OUT       ?= ledger
GOFLAGS_RELEASE = -trimpath -ldflags "-s -w -X main.version=$(VERSION)"

.PHONY: build release clean

build:
	CGO_ENABLED=0 go build $(GOFLAGS_RELEASE) -o $(OUT) ./cmd/ledger

release:
	rm -rf $(DIST) && mkdir -p $(DIST)
	for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build $(GOFLAGS_RELEASE) \
			-o $(DIST)/ledger-$(VERSION)-$$os-$$arch ./cmd/ledger || exit 1; \
	done
	cd $(DIST) && if command -v sha256sum >/dev/null; then sha256sum ledger-* > SHA256SUMS; \
		else shasum -a 256 ledger-* > SHA256SUMS; fi
	@cat $(DIST)/SHA256SUMS

clean:
	rm -rf $(DIST) $(OUT)

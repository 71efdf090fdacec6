// Module-root marker only. Every build uses -modfile=<version>/go.mod (see build.sh): one source tree
// (cmd/compat-gv), one go.mod/go.sum per pinned rocketmq-client-go/v2 release.
module rmqd/compat-tests/go-versions

go 1.21

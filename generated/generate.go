package generated

// Run from the repository root: go generate ./...
// The first step writes Go, docs and bundles from catalog/; the second reflects
// the fresh Go types into JSON Schemas, so it must run after the first.
//go:generate go run ../gen
//go:generate go run ../gen/schemagen

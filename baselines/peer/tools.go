//go:build tools

// Package peer pins the peer provider of the benchmark (scripts/bench):
// github.com/gavinbunney/terraform-provider-kubectl, built with `go build -o ... github.com/gavinbunney/terraform-provider-kubectl`.
package peer

import _ "github.com/gavinbunney/terraform-provider-kubectl"

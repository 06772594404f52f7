module github.com/clusterinventory/terraform-provider-sveltos/testenv/oracles/goduration

go 1.22

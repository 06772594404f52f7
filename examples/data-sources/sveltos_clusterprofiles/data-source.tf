# Every healthy production ClusterProfile in two namespaces.
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

data "sveltos_clusterprofiles" "prod" {
  namespaces      = ["fleet", "fleet-eu"]
  label_selector  = "env=prod,tier in (gold,silver)"
  require_healthy = true
}

# Which of them could be bridged now, and which could not (and why).
output "bridgeable" {
  value = [for p in data.sveltos_clusterprofiles.prod.cluster_profiles : p.id if p.ready_to_bridge]
}

output "not_bridgeable" {
  value = {
    for p in data.sveltos_clusterprofiles.prod.cluster_profiles :
    p.id => p.credential_source if !p.ready_to_bridge
  }
}

# All profiles of one cluster manager, with the credential settings of the bridge. providers.json, beside this
# file, is a KEP-5339 providers file naming the exec plugins the bridge may run.
data "sveltos_clusterprofiles" "ocm" {
  cluster_manager = "open-cluster-management"

  credentials {
    exec_providers_file = "${path.module}/providers.json"
    # A provider of the file runs only for the namespaces listed here.
    exec_providers = {
      "ocm-token" = { namespaces = ["*"] }
    }
  }
}

# Register every healthy production ClusterProfile of the fleet namespaces as a SveltosCluster.
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

resource "sveltos_cluster_inventory_bridge" "fleet" {
  name            = "fleet"
  namespaces      = ["fleet-eu", "fleet-us"]
  label_selector  = "env=prod"
  require_healthy = true

  extra_labels = {
    "managed-by" = "terraform"
  }

  credentials {
    # Only Secrets in namespaces labelled x-k8s.io/cluster-inventory-consumer=sveltos (not those next to the
    # ClusterProfiles).
    consumer                  = "sveltos"
    profile_namespace_secrets = false
    refresh_before            = "15m"
  }

  overrides = {
    "fleet-eu/legacy-1" = { skip = true }
    "fleet-us/canary"   = { paused = true, extra_labels = { ring = "0" } }
  }
}

output "bridged_clusters" {
  value = keys(sveltos_cluster_inventory_bridge.fleet.clusters)
}

# The inventory (ClusterProfiles and their credential Secrets) lives on a hub cluster; Sveltos runs on a
# separate management cluster. The provider connects to the management cluster, where SveltosClusters and
# their kubeconfig Secrets are written; each `inventory` block connects to the hub, which is only read.
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

variable "kubeconfig" {
  description = "Kubeconfig file with a context for each cluster."
  type        = string
  default     = "~/.kube/config"
}

# Sveltos' management cluster: written to.
provider "sveltos" {
  config_path    = var.kubeconfig
  config_context = "sveltos-management"
}

locals {
  fleet_namespaces = ["fleet-eu", "fleet-us"]
}

# What the hub holds, as the bridge would see it.
data "sveltos_clusterprofiles" "hub" {
  namespaces = local.fleet_namespaces

  # The inventory hub: read only.
  inventory {
    config_path    = var.kubeconfig
    config_context = "ocm-hub"
  }
}

resource "sveltos_cluster_inventory_bridge" "fleet" {
  name       = "fleet"
  namespaces = local.fleet_namespaces

  inventory {
    config_path    = var.kubeconfig
    config_context = "ocm-hub"
  }

  credentials {
    # Only Secrets in hub namespaces labelled x-k8s.io/cluster-inventory-consumer=sveltos (not those next to
    # the ClusterProfiles).
    consumer                  = "sveltos"
    profile_namespace_secrets = false
  }
}

output "not_ready_on_hub" {
  value = [for p in data.sveltos_clusterprofiles.hub.cluster_profiles : p.id if !p.ready_to_bridge]
}

output "bridged_clusters" {
  value = keys(sveltos_cluster_inventory_bridge.fleet.clusters)
}

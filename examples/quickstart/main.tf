# Quickstart: bridge every ClusterProfile of the demo inventory into Sveltos.
terraform {
  required_providers {
    sveltos = {
      source = "clusterinventory/sveltos"
    }
  }
}

variable "kubeconfig" {
  description = "Kubeconfig of the management cluster (holds the ClusterProfiles)."
  type        = string
}

variable "namespaces" {
  description = "Namespaces holding ClusterProfiles to bridge."
  type        = list(string)
  default     = ["team-a", "team-b"]
}

provider "sveltos" {
  config_path = var.kubeconfig
}

# What the inventory holds, and where each profile's kubeconfig would come from.
data "sveltos_clusterprofiles" "all" {
  namespaces = var.namespaces
}

resource "sveltos_cluster_inventory_bridge" "demo" {
  name       = "quickstart"
  namespaces = var.namespaces

  extra_labels = {
    "bridged-by" = "terraform"
  }
}

output "profiles" {
  value = { for p in data.sveltos_clusterprofiles.all.cluster_profiles : p.id => p.credential_source }
}

output "sveltos_clusters" {
  value = { for k, c in sveltos_cluster_inventory_bridge.demo.clusters : k => c.sveltos_cluster }
}

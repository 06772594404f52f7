# Quickstart: bridge the ClusterProfiles of a management cluster into Sveltos.
# Run by hand (see README.md): `tofu init`, `tofu plan`, `tofu apply`, `tofu destroy`.
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

variable "kubeconfig" {
  description = "Path of the management cluster's kubeconfig (the cluster holding the ClusterProfiles and Sveltos). Null: KUBE_CONFIG_PATH, then KUBECONFIG, then the in-cluster service account."
  type        = string
  default     = null
}

variable "kube_context" {
  description = "Context of that kubeconfig to use. Null: its current-context."
  type        = string
  default     = null
}

variable "namespaces" {
  description = "Namespaces whose ClusterProfiles are bridged. Null: every namespace."
  type        = list(string)
  default     = null
}

variable "bridge_name" {
  description = "Name of the bridge: the value of the sveltos.clusterinventory.io/bridge label on everything it writes."
  type        = string
  default     = "quickstart"
}

provider "sveltos" {
  config_path    = var.kubeconfig
  config_context = var.kube_context
}

# What the inventory holds, and where each profile's kubeconfig would come from.
data "sveltos_clusterprofiles" "all" {
  namespaces = var.namespaces
}

# No credentials block: a kubeconfig Secret is taken from next to its ClusterProfile (seed format, key `config`), from
# a namespace labelled x-k8s.io/cluster-inventory-consumer=sveltos (KEP push format, key `Config`), or from the Secret
# a `kubeconfig-secretreader` access provider names in the profile's namespace.
resource "sveltos_cluster_inventory_bridge" "demo" {
  name       = var.bridge_name
  namespaces = var.namespaces

  extra_labels = {
    "bridged-by" = "terraform"
  }
}

output "profiles" {
  description = "Every ClusterProfile found, with where its kubeconfig comes from (or why there is none)."
  value       = { for p in data.sveltos_clusterprofiles.all.cluster_profiles : p.id => p.credential_source }
}

output "sveltos_clusters" {
  description = "The SveltosClusters the bridge registered, keyed by ClusterProfile."
  value       = { for k, c in sveltos_cluster_inventory_bridge.demo.clusters : k => c.sveltos_cluster }
}

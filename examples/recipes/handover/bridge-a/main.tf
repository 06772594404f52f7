# Bridge "a", which hands clusters over to bridge "b" (see ../README.md for the order). Step 2 of the handover adds
# the clusters to `handed_over`, once bridge "b" has applied with them selected and `adopt = true`.
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

variable "kubeconfig" {
  description = "Path of the management cluster's kubeconfig. Null: KUBE_CONFIG_PATH, then KUBECONFIG, then the in-cluster service account."
  type        = string
  default     = null
}

variable "namespaces" {
  description = "Namespaces whose ClusterProfiles bridge \"a\" registers."
  type        = list(string)
  default     = ["fleet-eu"]
}

variable "claim_namespace" {
  description = "Namespace of bridge \"a\"'s claim."
  type        = string
  default     = "sveltos-bridge-a"
}

variable "handed_over" {
  description = "Clusters (ClusterProfile namespace/name) that bridge \"b\" has taken over: no longer bridged here."
  type        = list(string)
  default     = []
}

provider "sveltos" {
  config_path = var.kubeconfig
}

resource "sveltos_cluster_inventory_bridge" "a" {
  name            = "a"
  claim_namespace = var.claim_namespace
  namespaces      = var.namespaces

  extra_annotations = {
    "sharding.projectsveltos.io/key" = "a"
  }

  # A handover removes nothing from this bridge: by the time a cluster is listed in `handed_over`, bridge "b" owns
  # its objects. If the steps are done in the wrong order (this bridge first), the plan would deregister the
  # cluster; with max_removals = 0 it fails instead, before anything is written. Raise it again afterwards if
  # this bridge is meant to deregister clusters on its own.
  max_removals = 0

  overrides = { for key in var.handed_over : key => { skip = true } }
}

output "clusters" {
  value = keys(sveltos_cluster_inventory_bridge.a.clusters)
}

# Bridge "b", which takes clusters over from bridge "a" (see ../README.md for the order). Step 1 of the handover adds
# the clusters to `taken_over` with `adopt = true`; step 3 sets `adopt` back to false.
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

variable "claim_namespace" {
  description = "Namespace of bridge \"b\"'s claim."
  type        = string
  default     = "sveltos-bridge-b"
}

variable "taken_over" {
  description = "Clusters (ClusterProfile namespace/name) this bridge registers, among them those taken over from bridge \"a\"."
  type        = list(string)
  default     = ["fleet-eu/edge-7"]
}

variable "adopt" {
  description = "Take over the existing SveltosClusters and Secrets of the selected clusters (true for the handover apply only)."
  type        = bool
  default     = true
}

provider "sveltos" {
  config_path = var.kubeconfig
}

resource "sveltos_cluster_inventory_bridge" "b" {
  name            = "b"
  claim_namespace = var.claim_namespace
  names           = var.taken_over

  extra_annotations = {
    "sharding.projectsveltos.io/key" = "b"
  }

  adopt = var.adopt
}

output "clusters" {
  value = keys(sveltos_cluster_inventory_bridge.b.clusters)
}

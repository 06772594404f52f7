# The EU part of a fleet split across states: one state, one bridge, one identity. The other states look the
# same with their own name, claim namespace, namespaces and shard (see ../README.md).
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

variable "kubeconfig" {
  description = "Path of the management cluster's kubeconfig, for the identity of rbac/eu.yaml. Null: KUBE_CONFIG_PATH, then KUBECONFIG, then the in-cluster service account."
  type        = string
  default     = null
}

provider "sveltos" {
  config_path = var.kubeconfig
}

resource "sveltos_cluster_inventory_bridge" "eu" {
  # Unique on the management cluster: the name labels everything this bridge writes, and its claim
  # (ConfigMap sveltos-bridge-eu) makes a second state with the same name fail at plan.
  name = "eu"
  # This state's own namespace for the claim, the only ConfigMaps its identity may write.
  claim_namespace = "sveltos-bridge-eu"

  # Disjoint from every other state's selection: no ClusterProfile is selected by two bridges.
  namespaces = ["fleet-eu"]

  # Sveltos sharding: the SveltosClusters of this bridge are served by the Sveltos controllers of shard "eu".
  extra_annotations = {
    "sharding.projectsveltos.io/key" = "eu"
  }
  extra_labels = {
    "region" = "eu"
  }

  strict       = true
  max_removals = 5
}

# A bridge meant to be applied by a scheduler (see README.md): new ClusterProfiles are registered, and removed ones
# deregistered, only when something runs `apply`. Copy this directory into your infrastructure repository.
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

variable "kubeconfig" {
  description = "Path of the management cluster's kubeconfig. Null: KUBE_CONFIG_PATH, then KUBECONFIG, then the in-cluster service account (a runner pod on the management cluster)."
  type        = string
  default     = null
}

variable "namespaces" {
  description = "Namespaces whose ClusterProfiles are bridged."
  type        = list(string)
  default     = ["fleet-eu", "fleet-us"]
}

provider "sveltos" {
  config_path = var.kubeconfig
}

resource "sveltos_cluster_inventory_bridge" "fleet" {
  name       = "fleet"
  namespaces = var.namespaces

  # An unattended run must not end green with clusters left out. A problem confined to one cluster (no usable
  # credential, two candidate Secrets, a name collision, ...) leaves that cluster out; the apply registers every
  # other cluster, records them, then fails naming the left-out ones and their causes, at every run until they are
  # fixed. (`strict = true` would stop the plan instead, applying nothing.)
  fail_on_skipped = true

  # A selector typo or an emptied namespace cannot deregister the fleet in a run nobody watches: a plan that would
  # remove more than this fails before anything is written. Raise it for a planned decommissioning.
  max_removals = 5
  # Likewise for updates: a plan that would change the labels, annotations or spec of more SveltosClusters than this
  # (an extra_labels typo, an inventory relabelled wholesale) fails before anything is written.
  max_updates = 5

  extra_labels = {
    "managed-by" = "terraform"
  }

  lifecycle {
    # `destroy`, a new `name` or `-replace` deregister every cluster of the bridge (max_removals does not apply to
    # them). Remove this line on purpose when you mean it.
    prevent_destroy = true
  }
}

output "bridged_clusters" {
  value = keys(sveltos_cluster_inventory_bridge.fleet.clusters)
}

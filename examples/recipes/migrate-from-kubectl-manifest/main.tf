# The configuration of before.tf.example after the migration (see README.md): the kubectl_manifest resources are
# forgotten, never destroyed, and one bridge adopts the objects they wrote. Needs Terraform >= 1.7 or OpenTofu
# >= 1.10 (`removed` blocks with `lifecycle { destroy = false }`).
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
    # Still needed by the apply that forgets the kubectl_manifest resources (their state names this provider);
    # remove it, and the provider block below, once that apply is done.
    kubectl = {
      source  = "gavinbunney/kubectl"
      version = ">= 1.14.0"
    }
  }
}

variable "kubeconfig" {
  description = "Path of the management cluster's kubeconfig."
  type        = string
}

variable "namespaces" {
  description = "Namespaces whose ClusterProfiles the bridge registers: those of the clusters kubectl_manifest registered."
  type        = list(string)
}

provider "sveltos" {
  config_path = var.kubeconfig
}

provider "kubectl" {
  config_path      = var.kubeconfig
  load_config_file = true
}

# Forget the objects in state; leave them in the cluster for the bridge to adopt.
removed {
  from = kubectl_manifest.cluster

  lifecycle {
    destroy = false
  }
}

removed {
  from = kubectl_manifest.secret

  lifecycle {
    destroy = false
  }
}

resource "sveltos_cluster_inventory_bridge" "fleet" {
  name       = "fleet"
  namespaces = var.namespaces

  # The existing Secrets and SveltosClusters at the names the bridge writes are taken over (same objects, same
  # UIDs) instead of being reported as name collisions. Set it back to false after the migration.
  adopt = true

  # The labels kubectl_manifest set that are not on the ClusterProfiles; without them, the bridge leaves them
  # where they are but does not manage them.
  extra_labels = {
    env = "prod"
  }
}

output "bridged_clusters" {
  value = keys(sveltos_cluster_inventory_bridge.fleet.clusters)
}

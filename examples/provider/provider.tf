terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

# The hashicorp/kubernetes provider's connection attribute names (see the differences in the docs). With none set,
# the provider uses KUBECONFIG and then the in-cluster service account.
provider "sveltos" {
  config_path    = "~/.kube/config"
  config_context = "management"
}

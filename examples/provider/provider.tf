terraform {
  required_providers {
    sveltos = {
      source = "clusterinventory/sveltos"
    }
  }
}

# Same connection attributes as the hashicorp/kubernetes provider. With none set, the provider uses
# KUBECONFIG and then the in-cluster service account.
provider "sveltos" {
  config_path    = "~/.kube/config"
  config_context = "management"
}

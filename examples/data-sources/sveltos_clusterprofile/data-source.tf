# One ClusterProfile, and whether the bridge could register it.
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

data "sveltos_clusterprofile" "prod_eu" {
  namespace = "fleet"
  name      = "prod-eu-1"
}

output "prod_eu_ready" {
  value = data.sveltos_clusterprofile.prod_eu.ready_to_bridge
}

output "prod_eu_credential_source" {
  # e.g. "secret:fleet/prod-eu-1-kubeconfig#Config", or "none: <reason>"
  value = data.sveltos_clusterprofile.prod_eu.credential_source
}

# The same lookup with the bridge's credential settings.
data "sveltos_clusterprofile" "prod_eu_for_sveltos" {
  namespace = "fleet"
  name      = "prod-eu-1"

  credentials {
    consumer        = "sveltos"
    kubeconfig_keys = ["Config", "kubeconfig"]
  }
}

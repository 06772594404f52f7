# The SveltosClusters the "fleet" bridge registered, with what Sveltos reports about each.
terraform {
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

data "sveltos_clusters" "fleet" {
  bridge     = "fleet"
  namespaces = ["fleet-eu", "fleet-us"]
  # With the bridge in the same configuration, pin its claim (a wrong namespace is then an error):
  #   claim_namespace = sveltos_cluster_inventory_bridge.fleet.claim_namespace
  #   instance_id     = sveltos_cluster_inventory_bridge.fleet.instance_id
}

output "not_reached" {
  value = {
    for c in data.sveltos_clusters.fleet.clusters :
    c.id => coalesce(c.failure_message, c.connection_status, "not reported yet") if !c.ready
  }
}

output "credentials_expiring" {
  value = { for c in data.sveltos_clusters.fleet.clusters : c.id => c.credential_expires_at if c.credential_expires_at != null }
}

# Every production SveltosCluster, whoever registered it, and whether the bridge owns it.
data "sveltos_clusters" "prod" {
  bridge         = "fleet"
  owned_only     = false
  label_selector = "env=prod"
}

output "not_bridged" {
  # `owned` is null when the claim cannot tell (see the warning): `== false` leaves those out.
  value = [for c in data.sveltos_clusters.prod.clusters : c.id if c.owned == false]
}

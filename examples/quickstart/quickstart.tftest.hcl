# `tofu test` for the quickstart. It expects an inventory in which every selected ClusterProfile has usable
# credentials, such as the one scripts/demo creates; `tofu test` destroys what it applied. Against another cluster,
# pick such namespaces: tofu test -var 'namespaces=["team-a"]'.

run "plan_shows_every_bridgeable_profile" {
  command = plan

  assert {
    condition     = length(data.sveltos_clusterprofiles.all.cluster_profiles) > 0
    error_message = "the inventory is empty"
  }

  assert {
    condition = alltrue([
      for p in data.sveltos_clusterprofiles.all.cluster_profiles : p.ready_to_bridge
    ])
    error_message = "every demo profile has usable credentials"
  }
}

run "apply_registers_every_profile" {
  command = apply

  assert {
    condition     = length(sveltos_cluster_inventory_bridge.demo.clusters) == length(data.sveltos_clusterprofiles.all.cluster_profiles)
    error_message = "every profile is bridged"
  }

  assert {
    condition = alltrue([
      for k, c in sveltos_cluster_inventory_bridge.demo.clusters :
      c.secret == "${split("/", k)[0]}/${split("/", k)[1]}-sveltos-kubeconfig" && length(c.kubeconfig_sha256) == 64
    ])
    error_message = "each cluster has its kubeconfig Secret next to it, recorded by hash only"
  }

  assert {
    condition = alltrue([
      for c in sveltos_cluster_inventory_bridge.demo.clusters : c.labels["bridged-by"] == "terraform"
    ])
    error_message = "extra labels are applied"
  }
}

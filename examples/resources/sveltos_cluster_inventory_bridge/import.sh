# Take over the objects labelled sveltos.clusterinventory.io/bridge=<name>. The bridge's configuration is
# restored from the SveltosClusters it wrote, so the next plan is empty when the configuration matches.
terraform import sveltos_cluster_inventory_bridge.fleet fleet

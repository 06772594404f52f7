# Take over the objects labelled sveltos.clusterinventory.io/bridge=<name>. The bridge's arguments are restored
# from its claim (ConfigMap sveltos-bridge-<name> in claim_namespace; use <claim namespace>/<name> as the ID when it
# is not "default"), so the next plan is empty when the configuration matches, except for the `inventory` block and
# `timeouts`, which are not restored: a bridge that sets them shows them as changes once.
terraform import sveltos_cluster_inventory_bridge.fleet fleet

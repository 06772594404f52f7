# Take over the objects labelled sveltos.clusterinventory.io/bridge=<name>. The bridge's arguments, its
# `inventory` block and `timeouts` are restored from its claim (ConfigMap sveltos-bridge-<name> in claim_namespace;
# use <claim namespace>/<name> as the ID when it is not "default"), so the next plan is empty when the configuration
# matches. The inventory block's secrets (token, client_key, exec.env) are never recorded: the configuration
# supplies them, and a stored `token` or `client_key` shows as one (sensitive) change until the next apply; a
# write-only `token_wo` is never stored, so it shows no change.
terraform import sveltos_cluster_inventory_bridge.fleet fleet

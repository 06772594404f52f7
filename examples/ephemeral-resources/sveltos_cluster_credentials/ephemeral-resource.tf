# The credentials of one member cluster, resolved from its ClusterProfile as the bridge would resolve them.
# Needs Terraform >= 1.10 or OpenTofu >= 1.11. Nothing here reaches the state or a plan file.
terraform {
  # Ephemeral resources: Terraform >= 1.10 (OpenTofu >= 1.11).
  required_version = ">= 1.10"
  required_providers {
    sveltos = {
      source  = "clusterinventory/sveltos"
      version = "~> 0.1.0"
    }
  }
}

ephemeral "sveltos_cluster_credentials" "prod_eu" {
  namespace = "fleet"
  name      = "prod-eu-1"

  # The same block, with the same rules, as on sveltos_cluster_inventory_bridge. providers.json, beside this file,
  # runs eks-token (also beside it, installed as /usr/local/bin/eks-token): it reads the cluster's name and region
  # from the ClusterProfile's access provider, extension client.authentication.k8s.io/exec, here
  # {"clusterName": "prod-eu-1", "region": "eu-west-1"} (given to the plugin as spec.cluster.config), and runs
  # `aws eks get-token --cluster-name prod-eu-1 --region eu-west-1 --output json` (aws: /usr/local/bin/aws, its
  # argument in providers.json).
  credentials {
    consumer            = "sveltos"
    exec_providers_file = "${path.module}/providers.json"
    exec_providers = {
      # Only for ClusterProfiles in namespace fleet whose server is an EKS endpoint.
      "eks-token" = {
        namespaces = ["fleet"]
        servers    = ["*.eks.amazonaws.com"]
      }
    }
  }
}

# A second sveltos provider talking to the member cluster (here: to read the ClusterProfiles it holds).
provider "sveltos" {
  alias                  = "prod_eu"
  host                   = ephemeral.sveltos_cluster_credentials.prod_eu.host
  cluster_ca_certificate = ephemeral.sveltos_cluster_credentials.prod_eu.cluster_ca_certificate
  token                  = ephemeral.sveltos_cluster_credentials.prod_eu.token
  client_certificate     = ephemeral.sveltos_cluster_credentials.prod_eu.client_certificate
  client_key             = ephemeral.sveltos_cluster_credentials.prod_eu.client_key
  tls_server_name        = ephemeral.sveltos_cluster_credentials.prod_eu.tls_server_name
  proxy_url              = ephemeral.sveltos_cluster_credentials.prod_eu.proxy_url
}

data "sveltos_clusterprofiles" "on_prod_eu" {
  provider = sveltos.prod_eu
}

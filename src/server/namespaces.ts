// The namespaces that exist from the start, as on a cluster: kube's own three, and cert-manager
// (the default cluster resource namespace and leader election's). Objects can only be created
// in a namespace that exists (kube-apiserver's NamespaceLifecycle admission).
export const builtInNamespaces: readonly string[] = ['default', 'kube-system', 'kube-public', 'cert-manager'];

/** kube's own namespaces, which NamespaceLifecycle admission never lets be deleted. */
export const immortalNamespaces: readonly string[] = ['default', 'kube-system', 'kube-public'];

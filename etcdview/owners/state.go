package owners

// RefState is what the garbage collector makes of one ownerReference.
type RefState uint8

const (
	// Solid: the owner exists as the reference names it.
	Solid RefState = iota
	// Absent: no object has the owner's uid. The reference dangles.
	Absent
	// Mismatch: an object has the uid, but not the kind or the name the
	// reference gives; the collector looks owners up by kind and name and
	// compares the uid, so to it the reference dangles.
	Mismatch
	// OtherNamespace: the owner is namespaced, in another namespace than
	// the dependent. Invalid: the collector looks in the dependent's
	// namespace, reports an OwnerRefInvalidNamespace event, and takes the
	// reference as dangling.
	OtherNamespace
	// NamespacedOwnerOfClusterScoped: a cluster-scoped dependent names an
	// owner of a namespaced kind. Invalid: the collector reports it and
	// never collects the dependent for it.
	NamespacedOwnerOfClusterScoped
	// UnknownKind: the owner's kind is neither stored here nor known to
	// this build; the collector cannot map it to a resource (unless an
	// aggregated API serves it) and retries without deciding.
	UnknownKind
)

// Dangling says whether the collector takes the reference as naming no
// owner: a dependent whose references all dangle is deleted.
func (s RefState) Dangling() bool {
	return s == Absent || s == Mismatch || s == OtherNamespace
}

// Invalid says whether the reference can never be right, whatever exists.
func (s RefState) Invalid() bool {
	return s == OtherNamespace || s == NamespacedOwnerOfClusterScoped
}

var stateWords = [...]string{
	Solid:                          "owner exists",
	Absent:                         "no object has this uid",
	Mismatch:                       "the object with this uid is not the kind and name referenced",
	OtherNamespace:                 "invalid: the owner is in another namespace (the collector looks in the dependent's)",
	NamespacedOwnerOfClusterScoped: "invalid: a cluster-scoped object cannot have a namespaced owner",
	UnknownKind:                    "kind not stored here nor known to this build: the collector cannot look it up",
}

// String says what the state means in a few words.
func (s RefState) String() string {
	if int(s) < len(stateWords) {
		return stateWords[s]
	}
	return "unknown state"
}

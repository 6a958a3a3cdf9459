// Package encjson reads what encoding/json writes: an index of a compact
// value (Spans), that value sorted and indented as json.MarshalIndent
// writes it decoded into maps (Indenter), and which types encoding/json
// writes through a method of theirs (CustomJSON, MarshalsAsView). decode's
// JSON output and the YAML emitter (decode/internal/yamlout) share it.
package encjson

package notes

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// nonZero is a value of t other than its zero, for the kinds a note's
// fields have.
func nonZero(t *testing.T, typ reflect.Type) reflect.Value {
	t.Helper()
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(typ, 0, 1), nonZero(t, typ.Elem())))
	default:
		t.Fatalf("no non-zero value for %s: add its kind here", typ)
	}
	return v
}

// TestWritableFieldsAreEverywhere: a field a client writes is declared in
// Note, Draft and Patch under one name, and then nothing else can forget
// it: the idempotency fingerprint changes with it, a patch naming only it
// is a change, Apply carries it from the note and from the patch, and
// WriteTo copies it into the note the store writes.
func TestWritableFieldsAreEverywhere(t *testing.T) {
	// The fields the server keeps: identity, history, and the trash, which
	// only its own operations set.
	history := []string{"ID", "AccountID", "CreatedAt", "UpdatedAt", "Version", "TrashedAt"}
	noteT, draftT, patchT := reflect.TypeFor[Note](), reflect.TypeFor[Draft](), reflect.TypeFor[Patch]()
	for _, f := range reflect.VisibleFields(noteT) {
		if slices.Contains(history, f.Name) {
			continue
		}
		if d, ok := draftT.FieldByName(f.Name); !ok || d.Type != f.Type {
			t.Errorf("Note.%s (%s) has no Draft field of its name and type: a client could not write it", f.Name, f.Type)
		}
	}
	for _, f := range reflect.VisibleFields(patchT) {
		if _, ok := draftT.FieldByName(f.Name); !ok {
			t.Errorf("Patch.%s has no Draft field of its name", f.Name)
		}
	}
	base := fingerprint("create", Draft{})
	cur := Note{ID: "n", AccountID: "a", Title: "old", Content: "old", Tags: []string{}, CreatedAt: time.Unix(1, 0), Version: 3}
	for _, f := range reflect.VisibleFields(draftT) {
		p, ok := patchT.FieldByName(f.Name)
		if !ok || p.Type != reflect.PointerTo(f.Type) {
			t.Errorf("Draft.%s (%s) has no Patch field *%s of its name: PATCH could not set it", f.Name, f.Type, f.Type)
			continue
		}
		val := nonZero(t, f.Type)

		var d Draft
		reflect.ValueOf(&d).Elem().FieldByIndex(f.Index).Set(val)
		if fingerprint("create", d) == base {
			t.Errorf("Draft.%s is not in the idempotency fingerprint: a retry that changes only it would replay the first note", f.Name)
		}
		n := cur
		d.WriteTo(&n)
		if got := reflect.ValueOf(n).FieldByName(f.Name); !reflect.DeepEqual(got.Interface(), val.Interface()) {
			t.Errorf("Draft.WriteTo left Note.%s at %v, want %v", f.Name, got, val)
		}

		var patch Patch
		ptr := reflect.New(f.Type)
		ptr.Elem().Set(val)
		reflect.ValueOf(&patch).Elem().FieldByIndex(p.Index).Set(ptr)
		if patch.Empty() {
			t.Errorf("a patch of Patch.%s alone counts as no change", f.Name)
		}
		applied, err := patch.Apply(cur)
		if err != nil {
			t.Fatalf("apply a patch of %s: %v", f.Name, err)
		}
		got := reflect.ValueOf(applied).FieldByIndex(f.Index)
		if !reflect.DeepEqual(got.Interface(), val.Interface()) {
			t.Errorf("a patch of %s applied gives %v, want %v", f.Name, got, val)
		}
	}
	// The fields a patch leaves alone come from the note.
	kept, err := Patch{}.Apply(cur)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range reflect.VisibleFields(draftT) {
		if want := reflect.ValueOf(cur).FieldByName(f.Name); !reflect.DeepEqual(reflect.ValueOf(kept).FieldByIndex(f.Index).Interface(), want.Interface()) {
			t.Errorf("an empty patch applied changes %s", f.Name)
		}
	}
	if !(Patch{}).Empty() {
		t.Error("the empty patch is a change")
	}
}

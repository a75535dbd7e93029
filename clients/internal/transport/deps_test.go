package transport

import (
	"os"
	"strings"
	"testing"
)

// TestModuleRequiresNoServerDependencies keeps both clients light to
// import: the clients module's go.mod may name the oapi-codegen runtime
// and what that needs, never a web framework, ORM, database driver or
// Redis client.
func TestModuleRequiresNoServerDependencies(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"gin-gonic", "gorm.io", "jackc/pgx", "lib/pq", "redis", "tickerdesk/pkg", "-svc"} {
		if strings.Contains(string(mod), banned) {
			t.Errorf("go.mod requires %s:\n%s", banned, mod)
		}
	}
	if !strings.Contains(string(mod), "github.com/oapi-codegen/runtime") {
		t.Errorf("go.mod does not name the oapi-codegen runtime the generated code imports:\n%s", mod)
	}
}

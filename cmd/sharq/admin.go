package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/store"
	"github.com/sharq-dev/sharq/internal/store/postgres"
	"github.com/sharq-dev/sharq/internal/store/sqlite"
)

const adminUsage = `usage: sharq admin keys <verb> [flags]
       sharq admin migrate --store postgres://...

  keys create --name NAME [--policy P]...   issue a key; its secret is shown this once
  keys list                                 the keys: name, ID, policies, status
  keys disable NAME|ID, enable NAME|ID      stop or restart a key's use
  keys delete NAME|ID                       remove a key
  migrate                                   bring a PostgreSQL store's schema up to date

They act on the store directly (the SQLite database of --data-dir, or the
PostgreSQL one of --store or $SHARQ_STORE), so they work with the servers
stopped as well as running; only create makes a database where there is
none. Policies are built-in (AdministratorAccess, ReadOnlyAccess) or
applied with sharq apply; a key is refused any other. Servers sharing a
PostgreSQL store must share one server key (--server-key) to read the
keys' secrets.
`

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) >= 1 && args[0] == "migrate" {
		return runMigrate(ctx, args[1:], stdout, stderr)
	}
	if len(args) < 2 || args[0] != "keys" {
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	verb := args[1]
	fs := flag.NewFlagSet("admin keys "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "./sharq-data", "the server's data directory")
	storeURL := fs.String("store", os.Getenv("SHARQ_STORE"), "the servers' PostgreSQL store (default $SHARQ_STORE; empty: SQLite in --data-dir)")
	serverKey := fs.String("server-key", "", "file of the server key (default <data-dir>/server.key, created if missing)")
	account := fs.String("account-id", "000000000000", "account ID in the keys' principals (as the server's)")
	output := fs.String("o", "table", "create: table, json or env (export lines); list: table or json")
	name := fs.String("name", "", "create: the key's name (its principal is user/NAME)")
	var policies stringList
	fs.Var(&policies, "policy", "create: a policy the key has (repeatable)")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	switch verb {
	case "create", "list", "disable", "enable", "delete":
	default:
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	// Only create makes a database; the other verbs act on keys that
	// must already be there, so a mistyped --data-dir is said as such.
	if verb != "create" && *storeURL == "" {
		if err := haveDatabase(*dataDir); err != nil {
			fmt.Fprintln(stderr, "sharq admin keys "+verb+":", err)
			return 1
		}
	}
	st, err := openKeyStore(ctx, *storeURL, *dataDir)
	if err != nil {
		fmt.Fprintln(stderr, "sharq admin:", err)
		return 1
	}
	defer st.Close()
	keys := accessStoreOf(st)
	switch verb {
	case "create":
		var ring *access.Keyring
		ring, err = openKeyring(keys, (&authConfig{serverKey: *serverKey}).serverKeyPath(*dataDir), *account)
		if err == nil {
			err = createKey(ctx, ring, *name, policies, *output, stdout)
		}
	case "list":
		err = listKeys(ctx, keys, *output, stdout)
	case "disable", "enable", "delete": // "<verb>d ID" on success
		err = changeKey(ctx, keys, verb, fs.Args(), stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "sharq admin keys "+verb+":", err)
		if errors.Is(err, access.ErrNotFound) || errors.Is(err, access.ErrUnknownPolicy) {
			return 3
		}
		return 1
	}
	return 0
}

// openKeyring is the keyring over keys, sealing with the server key at
// path (made there if missing).
func openKeyring(keys access.KeyStore, path, account string) (*access.Keyring, error) {
	key, err := loadServerKey(path)
	if err != nil {
		return nil, err
	}
	return access.NewKeyring(keys, key, account)
}

func createKey(ctx context.Context, ring *access.Keyring, name string, policies []string, output string, w io.Writer) error {
	if name == "" {
		return errors.New("--name is required")
	}
	for _, p := range policies {
		if p == "" || strings.ContainsAny(p, " /") {
			return fmt.Errorf("--policy %q: not a policy name", p)
		}
	}
	k, err := ring.Create(ctx, name, policies)
	if err != nil {
		return err
	}
	switch output {
	case "json":
		return json.NewEncoder(w).Encode(map[string]any{"name": k.Name, "accessKeyId": k.ID,
			"secretAccessKey": k.Secret, "policies": nonNilStrings(k.Policies)})
	case "env":
		_, err = fmt.Fprintf(w, "export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY='%s'\n", k.ID, k.Secret)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "name\t%s\naccess key ID\t%s\nsecret access key\t%s\npolicies\t%s\n", k.Name, k.ID, k.Secret, strings.Join(k.Policies, ", "))
	fmt.Fprintln(tw, "\nThe secret is shown only now.")
	return tw.Flush()
}

func listKeys(ctx context.Context, keys access.KeyStore, output string, w io.Writer) error {
	ks, err := keys.Keys(ctx)
	if err != nil {
		return err
	}
	if output == "json" {
		type row struct {
			Name        string   `json:"name"`
			AccessKeyID string   `json:"accessKeyId"`
			Policies    []string `json:"policies"`
			Status      string   `json:"status"`
			CreatedAt   string   `json:"createdAt"`
		}
		rows := []row{}
		for _, k := range ks {
			rows = append(rows, row{k.Name, k.ID, nonNilStrings(k.Policies), keyStatus(k), k.CreatedAt.Format("2006-01-02T15:04:05Z")})
		}
		return json.NewEncoder(w).Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tACCESS KEY ID\tPOLICIES\tSTATUS\tCREATED")
	for _, k := range ks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.Name, k.ID, strings.Join(k.Policies, ","), keyStatus(k), k.CreatedAt.Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

func keyStatus(k access.StoredKey) string {
	if k.Disabled {
		return "disabled"
	}
	return "active"
}

// changeKey disables, enables or deletes the key named by name or ID.
func changeKey(ctx context.Context, keys access.KeyStore, verb string, args []string, w io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("name one key, by name or access key ID")
	}
	ks, err := keys.Keys(ctx)
	if err != nil {
		return err
	}
	id := ""
	for _, k := range ks {
		if k.Name == args[0] || k.ID == args[0] {
			id = k.ID
		}
	}
	if id == "" {
		return fmt.Errorf("no access key %q: %w", args[0], access.ErrNotFound)
	}
	switch verb {
	case "delete":
		err = keys.DeleteKey(ctx, id)
	default:
		err = keys.SetKeyDisabled(ctx, id, verb == "disable")
	}
	if err == nil {
		fmt.Fprintf(w, "%sd %s\n", verb, id)
	}
	return err
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// haveDatabase tells whether dataDir holds a server's SQLite database.
func haveDatabase(dataDir string) error {
	path := filepath.Join(dataDir, "sharq.db")
	_, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no sharq database in %s (%s does not exist): give the server's --data-dir, "+
			"or --store for a PostgreSQL store", dataDir, path)
	}
	return err
}

// openKeyStore opens the store whose keys the admin verbs manage.
func openKeyStore(ctx context.Context, storeURL, dataDir string) (store.Store, error) {
	if isPostgresURL(storeURL) {
		return postgres.Open(ctx, storeURL)
	}
	if storeURL != "" {
		return nil, fmt.Errorf("--store %q: want a postgres:// URL (or nothing, for the SQLite file in --data-dir)", storeURL)
	}
	return sqlite.Open(filepath.Join(dataDir, "sharq.db"))
}

// runMigrate brings a PostgreSQL store's schema up to date; servers also
// do it when they start.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("admin migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	storeURL := fs.String("store", os.Getenv("SHARQ_STORE"), "the PostgreSQL store (default $SHARQ_STORE)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !isPostgresURL(*storeURL) {
		fmt.Fprintln(stderr, "sharq admin migrate: --store postgres://... is required (a SQLite store migrates when a server opens it)")
		return 2
	}
	st, err := postgres.Open(ctx, *storeURL) // Open applies the migrations
	if err != nil {
		fmt.Fprintln(stderr, "sharq admin migrate:", err)
		return 1
	}
	st.Close()
	fmt.Fprintln(stdout, "schema up to date")
	return 0
}

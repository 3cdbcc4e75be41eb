package dubbo

import (
	"slices"
	"testing"
)

// TestMatch covers UrlUtils.isMatch as summarised in spec §1.3 and
// §1.1 (subscribe: interface, group, version, classifier are query
// conditions and may be *). Each row names the rule it checks; rule numbers
// are those in Match's doc comment.
func TestMatch(t *testing.T) {
	const p = "dubbo://10.0.0.5:20880/com.foo.Bar"
	const c = "consumer://10.0.0.9/com.foo.Bar"
	tests := []struct {
		rule string
		sub  string
		reg  string
		want bool
	}{
		// 1. interface
		{"1 interface equal", c, p, true},
		{"1 interface differs", c, "dubbo://10.0.0.5:20880/com.foo.Other", false},
		{"1 interface param overrides path", c + "?interface=com.foo.Bar", "dubbo://h:1/x?interface=com.foo.Bar", true},
		{"1 interface param differs from path", c, "dubbo://h:1/com.foo.Bar?interface=com.foo.Other", false},
		{"1 subscriber * sees every service (admin)", "consumer://h/*?interface=*", p, true},
		{"1 subscriber path * sees every service", "consumer://h/*", p, true},
		{"1 registered * applies to every service", c + "?category=configurators", "override://0.0.0.0/*?category=configurators", true},

		// 2. category
		{"2 default subscription asks providers", c, p, true},
		{"2 default subscription skips consumers", c, p + "?category=consumers", false},
		{"2 comma list includes routers", c + "?category=providers,configurators,routers", "route://0.0.0.0/com.foo.Bar?category=routers", true},
		{"2 comma list excludes consumers", c + "?category=providers,configurators,routers", "consumer://h/com.foo.Bar?category=consumers", false},
		{"2 * asks every category", c + "?category=*", "consumer://h/com.foo.Bar?category=consumers", true},
		{"2 -x excludes x", c + "?category=-consumers", "consumer://h/com.foo.Bar?category=consumers", false},
		{"2 -x keeps others", c + "?category=-consumers", p, true},

		// 3. enabled
		{"3 enabled provider visible", c, p + "?enabled=true", true},
		{"3 disabled provider hidden", c, p + "?enabled=false", false},
		{"3 disabled provider shown to enabled=*", c + "?enabled=*", p + "?enabled=false", true},
		{"3 enabled=true on subscriber does not reveal disabled", c + "?enabled=true", p + "?enabled=false", false},
		{"3 enabled=no reads as false (Boolean.parseBoolean)", c, p + "?enabled=no", false},

		// 4. group
		{"4 both without group", c, p, true},
		{"4 subscriber without group skips grouped provider", c, p + "?group=a", false},
		{"4 grouped subscriber skips ungrouped provider", c + "?group=a", p, false},
		{"4 group equal", c + "?group=a", p + "?group=a", true},
		{"4 group differs", c + "?group=a", p + "?group=b", false},
		{"4 group *", c + "?group=*", p + "?group=b", true},
		{"4 group * matches ungrouped provider", c + "?group=*", p, true},
		{"4 group list contains provider group", c + "?group=a,b", p + "?group=b", true},
		{"4 group list with spaces", c + "?group=a , b", p + "?group=b", true},
		{"4 group list misses provider group", c + "?group=a,b", p + "?group=c", false},
		{"4 group list does not match ungrouped provider", c + "?group=a,", p, false},
		{"4 * inside a list is not a wildcard (Dubbo tests * only alone)", c + "?group=a,*", p + "?group=c", false},
		{"4 group list is not a substring test", c + "?group=ab", p + "?group=a", false},

		// 5. version
		{"5 both without version", c, p, true},
		{"5 version equal", c + "?version=1.0.0", p + "?version=1.0.0", true},
		{"5 version differs", c + "?version=1.0.0", p + "?version=2.0.0", false},
		{"5 version *", c + "?version=*", p + "?version=2.0.0", true},
		{"5 version required but absent", c + "?version=1.0.0", p, false},
		{"5 versionless subscriber skips versioned provider", c, p + "?version=1.0.0", false},
		{"5 version is exact, not a list", c + "?version=1.0.0,2.0.0", p + "?version=2.0.0", false},

		// 6. classifier
		{"6 subscriber without classifier accepts any", c, p + "?classifier=x", true},
		{"6 classifier *", c + "?classifier=*", p + "?classifier=x", true},
		{"6 classifier equal", c + "?classifier=x", p + "?classifier=x", true},
		{"6 classifier differs", c + "?classifier=x", p + "?classifier=y", false},
		{"6 provider without classifier counts as *", c + "?classifier=x", p, false},
		{"6 classifier * on both sides", c + "?classifier=*", p, true},

		// all rules together, the spec §1.3 shapes
		{"all consumer subscription vs provider", "consumer://10.0.0.9/com.foo.BarService?category=providers,configurators,routers&check=false&side=consumer&version=1.0.0", provider, true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if got := Match(MustParse(tt.sub), MustParse(tt.reg)); got != tt.want {
				t.Errorf("Match(%s, %s) = %v, want %v", tt.sub, tt.reg, got, tt.want)
			}
		})
	}
}

// TestCategoryMatches covers the category rule of spec §1.3 (comma list, *,
// -x) and UrlUtils.isMatchCategory, including where namecast compares
// whole items instead of Dubbo's substrings.
func TestCategoryMatches(t *testing.T) {
	tests := []struct {
		subscriber, category string
		want                 bool
		why                  string
	}{
		{"", "providers", true, "empty means providers"},
		{"", "consumers", false, "empty means providers only"},
		{"providers", "providers", true, "single item"},
		{"providers", "routers", false, "single item, other category"},
		{"providers,configurators,routers", "routers", true, "list member"},
		{"providers,configurators,routers", "consumers", false, "list non-member"},
		{"providers , routers", "routers", true, "spaces around commas"},
		{"providers,,routers", "routers", true, "empty items ignored"},
		{"*", "consumers", true, "* is every category"},
		{"*", "dynamicrouters", true, "* includes categories beyond the four"},
		{"-consumers", "consumers", false, "exclusion"},
		{"-consumers", "routers", true, "only exclusions: everything else"},
		{"-consumers,-routers", "routers", false, "several exclusions"},
		{"*,-routers", "routers", false, "exclusion wins over * (Dubbo: * wins)"},
		{"*,-routers", "providers", true, "* with exclusion keeps others"},
		{"providers,-routers", "consumers", false, "named items limit (Dubbo: only exclusions count)"},
		{"providers,-routers", "providers", true, "named item with an exclusion"},
		{"dynamicconfigurators", "configurators", false, "whole items (Dubbo: substring match)"},
		{"providers", "provider", false, "whole items (Dubbo: substring match)"},
	}
	for _, tt := range tests {
		if got := CategoryMatches(tt.subscriber, tt.category); got != tt.want {
			t.Errorf("CategoryMatches(%q, %q) = %v, want %v: %s", tt.subscriber, tt.category, got, tt.want, tt.why)
		}
	}
}

func TestCategories(t *testing.T) {
	tests := []struct {
		sub  string
		want []string
	}{
		{"consumer://h/I", []string{"providers"}},
		{"consumer://h/I?category=", []string{"providers"}},
		{"consumer://h/I?category=providers,configurators,routers", []string{"providers", "configurators", "routers"}},
		{"consumer://h/I?category=routers,routers", []string{"routers"}},
		{"consumer://h/I?category=*", []string{"providers", "consumers", "routers", "configurators"}},
		{"consumer://h/I?category=*,-consumers", []string{"providers", "routers", "configurators"}},
		{"consumer://h/I?category=-routers", []string{"providers", "consumers", "configurators"}},
		{"consumer://h/I?category=providers,-providers", nil},
		{"consumer://h/I?category=*,dynamicrouters", []string{"providers", "consumers", "routers", "configurators", "dynamicrouters"}},
	}
	for _, tt := range tests {
		sub := MustParse(tt.sub)
		got := Categories(sub)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Categories(%s) = %q, want %q", tt.sub, got, tt.want)
		}
		// Every category listed must also pass the matching rule, or the
		// registry would announce a category it then never fills.
		for _, c := range got {
			if !CategoryMatches(sub.Param(KeyCategory, ""), c) {
				t.Errorf("Categories(%s) lists %q but CategoryMatches refuses it", tt.sub, c)
			}
		}
	}
}

// TestEmpty checks the empty:// URL of spec §1.2: the subscriber's URL with
// protocol empty and category=<cat>, as ZookeeperRegistry.toUrlsWithEmpty
// builds it.
func TestEmpty(t *testing.T) {
	sub := MustParse("consumer://10.0.0.9/com.foo.Bar?application=app&category=providers,configurators,routers&check=false&side=consumer&version=1.0.0")
	e := Empty(sub, CategoryRouters)
	want := "empty://10.0.0.9/com.foo.Bar?application=app&category=routers&check=false&side=consumer&version=1.0.0"
	if e.String() != want {
		t.Errorf("Empty = %s\nwant %s", e, want)
	}
	if e.Protocol() != EmptyProtocol || e.Category() != CategoryRouters || e.ServiceKey() != "com.foo.Bar:1.0.0" {
		t.Errorf("Empty fields: protocol %q category %q service key %q", e.Protocol(), e.Category(), e.ServiceKey())
	}
	if again := MustParse(e.String()); again.String() != e.String() {
		t.Errorf("Empty does not round-trip: %s", again)
	}
	if sub.Protocol() != "consumer" || sub.Param(KeyCategory, "") != "providers,configurators,routers" {
		t.Error("Empty changed the subscriber URL")
	}
	// The empty URL for a category still matches its subscriber, so a
	// registry may route it through the same filter as real entries.
	if !Match(sub, e) {
		t.Error("Empty(sub, routers) does not match sub")
	}
}

package dubbo

import (
	"iter"
	"slices"
	"strings"
)

// Match reports whether a subscriber receives a registered URL, following
// Dubbo's UrlUtils.isMatch(consumer, provider). All of these must hold:
//
//  1. Interface: equal, or either side is "*" (subscriber "*" is admin mode;
//     provider "*" is a rule for every service).
//  2. Category: the registered URL's category is one the subscriber asks for
//     (see CategoryMatches).
//  3. Enabled: a registered URL with enabled=false is hidden unless the
//     subscriber says enabled=*.
//  4. Group: the subscriber's group is "*", equal to the provider's
//     (including both absent), or a comma list containing it.
//  5. Version: the subscriber's version is "*" or equal (including both
//     absent).
//  6. Classifier: either absent on the subscriber, "*", or equal; an absent
//     classifier on the provider counts as "*".
func Match(subscriber, registered URL) bool {
	si, ri := subscriber.Interface(), registered.Interface()
	if si != Any && ri != Any && si != ri {
		return false
	}
	if !CategoryMatches(subscriber.Category(), registered.Category()) {
		return false
	}
	if !registered.Enabled() && subscriber.Param(KeyEnabled, "") != Any {
		return false
	}
	return groupMatches(subscriber.Group(), registered.Group()) &&
		wildcardOrEqual(subscriber.Version(), registered.Version()) &&
		wildcardOrEqual(subscriber.Param(KeyClassifier, Any), registered.Param(KeyClassifier, Any))
}

func wildcardOrEqual(want, have string) bool { return want == Any || want == have }

// groupMatches is Dubbo's rule: "*", equal, or a comma list naming the
// provider's group. An absent provider group is only matched by an absent
// subscriber group or "*", never by a list.
func groupMatches(want, have string) bool {
	if wildcardOrEqual(want, have) {
		return true
	}
	if have == "" {
		return false
	}
	for it := range listItems(want) {
		if it == have {
			return true
		}
	}
	return false
}

// CategoryMatches reports whether a subscription's category parameter
// (subscriberCategories) asks for category. An empty parameter means
// "providers"; otherwise it is a comma list whose items are a category, "*"
// for every category, or "-x" to exclude x.
//
// Dubbo tests these with substring search, so "dynamicconfigurators" also
// asks for "configurators" there, and "*" wins over any exclusion. namecast
// compares whole items and always honours exclusions; with only exclusions
// (or "*") every other category matches, and with named categories only they
// match.
func CategoryMatches(subscriberCategories, category string) bool {
	seen, named, matched := false, false, false
	for it := range listItems(subscriberCategories) {
		seen = true
		excluded, isExclusion := strings.CutPrefix(it, "-")
		switch {
		case isExclusion && excluded == category:
			return false // an exclusion wins over everything
		case isExclusion:
		case it == Any, it == category:
			matched = true
		default:
			named = true
		}
	}
	if !seen {
		return category == CategoryProviders
	}
	// Only "*" and exclusions means "everything not excluded".
	return matched || !named
}

// allCategories is what category=* subscribes to, as in Dubbo's ZooKeeper
// registry (toCategoriesPath).
var allCategories = []string{CategoryProviders, CategoryConsumers, CategoryRouters, CategoryConfigurators}

// Categories lists the categories a subscription asks for, in the order it
// names them: one notification (or one Empty URL) is due per category.
// Without a category parameter that is [providers]; "*", or a list of only
// exclusions, expands to providers, consumers, routers and configurators
// minus the exclusions. Every category returned satisfies CategoryMatches.
func Categories(sub URL) []string {
	var named, excluded []string
	wildcard := false
	for it := range listItems(sub.Param(KeyCategory, "")) {
		switch {
		case it == Any:
			wildcard = true
		case strings.HasPrefix(it, "-"):
			excluded = append(excluded, it[1:])
		default:
			named = append(named, it)
		}
	}
	if !wildcard && len(named) == 0 && len(excluded) == 0 {
		return []string{CategoryProviders}
	}
	if wildcard || len(named) == 0 {
		named = append(slices.Clone(allCategories), named...)
	}
	var out []string
	for _, c := range named {
		if !slices.Contains(excluded, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Empty is the URL Dubbo pushes when category has no entries for sub: the
// subscriber's own URL with protocol "empty" and category=<category>, as
// Dubbo's registries build it (ZookeeperRegistry.toUrlsWithEmpty). A Dubbo
// consumer that receives it for providers clears its invokers.
func Empty(sub URL, category string) URL {
	e := sub.WithParam(KeyCategory, category)
	e.protocol = EmptyProtocol
	e.full = e.build()
	return e
}

// listItems yields the items of a comma list as Dubbo's COMMA_SPLIT_PATTERN
// (\s*,+\s*) splits it, skipping empty items. It does not allocate, which
// keeps Match cheap when a registry filters every entry through it.
func listItems(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for it := range strings.SplitSeq(s, ",") {
			if it = strings.TrimSpace(it); it != "" && !yield(it) {
				return
			}
		}
	}
}

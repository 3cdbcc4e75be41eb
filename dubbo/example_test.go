package dubbo_test

import (
	"fmt"

	"github.com/namecast/namecast/dubbo"
)

func ExampleParse() {
	// Parameter order does not matter: the canonical String is the identity.
	u, err := dubbo.Parse("dubbo://10.0.0.5:20880/com.foo.Bar?version=1.0.0&interface=com.foo.Bar&group=blue")
	if err != nil {
		panic(err)
	}
	fmt.Println(u)
	fmt.Println(u.ServiceKey(), u.Category(), u.Dynamic())
	// Output:
	// dubbo://10.0.0.5:20880/com.foo.Bar?group=blue&interface=com.foo.Bar&version=1.0.0
	// blue/com.foo.Bar:1.0.0 providers true
}

func ExampleMatch() {
	sub := dubbo.MustParse("consumer://10.0.0.9/com.foo.Bar?category=providers,routers&group=blue,green&version=1.0.0")
	blue := dubbo.MustParse("dubbo://10.0.0.5:20880/com.foo.Bar?group=blue&version=1.0.0")
	red := dubbo.MustParse("dubbo://10.0.0.6:20880/com.foo.Bar?group=red&version=1.0.0")
	fmt.Println(dubbo.Match(sub, blue), dubbo.Match(sub, red))
	// Output: true false
}

func ExampleEmpty() {
	sub := dubbo.MustParse("consumer://10.0.0.9/com.foo.Bar?category=providers,routers&side=consumer")
	for _, c := range dubbo.Categories(sub) {
		fmt.Println(dubbo.Empty(sub, c))
	}
	// Output:
	// empty://10.0.0.9/com.foo.Bar?category=providers&side=consumer
	// empty://10.0.0.9/com.foo.Bar?category=routers&side=consumer
}

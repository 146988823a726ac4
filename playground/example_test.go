package playground_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/wasmgap/wasmgap/playground"
)

// The playground is an http.Handler: mount it, or serve it alone.
func ExampleNew() {
	srv := httptest.NewServer(playground.New(playground.Options{}))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/api/expected?kernel=fib_it&n=90")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output: {"kernel":"fib_it","args":[90],"label":"fib_it(90)","expected":"2880067194370816120"}
}

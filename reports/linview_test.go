package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/model"
)

// lifecycle is the job lifecycle over a small graph: PENDING to SUCCEEDED.
var lifecycle = model.JobLifecycle(func(from, to string) bool {
	return from == "" && to == "PENDING" || from == "PENDING" && to == "SUCCEEDED"
})

// illegalView is porcupine's page for a job the store finished and client 11
// then read as still pending: no linearization exists.
func illegalView(t *testing.T) string {
	t.Helper()
	ops := []porcupine.Operation{
		model.CommitOp(0, 2, "j-1", "", "PENDING"),
		model.CommitOp(0, 4, "j-1", "PENDING", "SUCCEEDED"),
		model.ReadOp(11, 6, 9, "j-1", "PENDING"),
	}
	res, info := porcupine.CheckOperationsVerbose(lifecycle, ops, time.Second)
	require.Equal(t, porcupine.Illegal, res)
	info.AddAnnotations([]porcupine.Annotation{{Tag: "faults", Start: 3, End: 3, Description: "AckLost"}})
	var buf bytes.Buffer
	require.NoError(t, porcupine.Visualize(lifecycle, info, &buf))
	return buf.String()
}

// viewClients reads the client ids of the operations in a porcupine page.
func viewClients(t *testing.T, doc string) []int {
	t.Helper()
	m := dataLine.FindStringSubmatch(doc)
	require.NotNil(t, m, "porcupine's page holds its data on one line")
	var data struct {
		Partitions []struct{ History []struct{ ClientId int } }
	}
	require.NoError(t, json.Unmarshal([]byte(m[2]), &data))
	var ids []int
	for _, p := range data.Partitions {
		for _, h := range p.History {
			ids = append(ids, h.ClientId)
		}
	}
	return ids
}

func TestFitClientsDropsEmptyRows(t *testing.T) {
	doc := illegalView(t)
	require.Contains(t, viewClients(t, doc), 11, "porcupine numbers rows by client id")

	fitted, rows := fitClients(doc, clientLabel("job"))
	require.ElementsMatch(t, []int{0, 0, 1}, viewClients(t, fitted), "two rows: the store and the one client")
	require.Equal(t, 3, rows, "store, client 10 and the faults row")
	require.Contains(t, fitted, `const rowLabels = ["store","client 10"]`)
	require.Contains(t, fitted, `"Tag":"faults"`, "the annotations are kept")

	page := deferRender(fitted)
	require.Contains(t, page, "whenLaidOut(function () { render(data); fitView(")
	require.Equal(t, 1, strings.Count(page, "function fitView("))
}

func TestFitClientsLeavesAnUnknownPageAlone(t *testing.T) {
	for _, doc := range []string{"<html>no data</html>", "const data = {not json\n", "const data = {\"Partitions\": 3}\n"} {
		out, rows := fitClients(doc, clientLabel("run"))
		require.Equal(t, doc, out)
		require.Zero(t, rows)
	}
	require.Equal(t, "<p>render(data) elsewhere</p>", deferRender("<p>render(data) elsewhere</p>"))
	require.Equal(t, "client 2", clientLabel("run")(3))
}

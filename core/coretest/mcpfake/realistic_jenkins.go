package mcpfake

import "github.com/mark3labs/mcp-go/mcp"

const (
	jobDesc   = "Full name of the job, including its folders (e.g. payments/deploy-prod)"
	buildDesc = "Build number, or one of lastBuild, lastSuccessfulBuild, lastFailedBuild, lastCompletedBuild (Optional, lastBuild if not provided)"
)

func jenkinsTools() []mcp.Tool {
	job := str("job", jobDesc, mcp.Required())
	build := str("number", buildDesc)
	return []mcp.Tool{
		readTool("jenkins_jobs_list",
			"List the Jenkins jobs in a folder, or at the top level, with their type (Pipeline, Multibranch, Freestyle, Folder), last build result and health score",
			str("folder", "Folder to list the jobs of (Optional, the top level if not provided)"),
			boolean("recursive", "Also list the jobs in sub-folders (Optional)"),
		),
		readTool("jenkins_job_get",
			"Get a Jenkins job: its description, parameters with their defaults, whether it is buildable, and its last successful, failed and completed builds",
			job,
		),
		readTool("jenkins_builds_list",
			"List the most recent builds of a Jenkins job with their number, result, duration, start time and cause",
			job,
			integer("limit", "Maximum number of builds to list (Optional, default 10)", mcp.DefaultNumber(10), mcp.Min(1), mcp.Max(100)),
		),
		readTool("jenkins_build_get",
			"Get a Jenkins build: result, duration, parameters, causes, the changes (commits) it built, and for a Pipeline the status and duration of each stage",
			job, build,
		),
		readTool("jenkins_build_log",
			"Get the console log of a Jenkins build. Long logs are cut to their last lines; with pattern, only the matching lines and some context are returned",
			job, build,
			integer("tail", "Number of lines to return from the end of the log (Optional, default 200)", mcp.DefaultNumber(200), mcp.Min(1)),
			str("pattern", "Optional regular expression; only lines matching it (with 3 lines of context) are returned"),
		),
		readTool("jenkins_test_report",
			"Get the test report of a Jenkins build: pass, fail and skip counts and the failing test cases with their error messages and stack trace heads",
			job, build,
		),
		readTool("jenkins_queue_list",
			"List the items waiting in the Jenkins build queue with how long each has waited and why (e.g. waiting for an executor with a label)"),
		readTool("jenkins_nodes_list",
			"List the Jenkins nodes (controller and agents) with their labels, executors in use, and whether they are online, with the offline reason",
			str("label", "Only list nodes with this label (Optional)"),
		),
		writeTool("jenkins_build_trigger",
			"Trigger a build of a Jenkins job, with parameters for a parameterized job, and return the queue item that will run it",
			job,
			object("parameters", "Build parameters as a JSON object of name/value pairs (e.g. {\"VERSION\": \"1.42.0\", \"DRY_RUN\": false}); parameters left out take their defaults"),
		),
		writeTool("jenkins_build_stop",
			"Abort a running Jenkins build",
			job,
			str("number", "Build number of the running build", mcp.Required()),
		),
		writeTool("jenkins_queue_cancel",
			"Cancel an item waiting in the Jenkins build queue before it starts",
			integer("id", "Id of the queue item, as listed by jenkins_queue_list", mcp.Required()),
		),
		writeTool("jenkins_node_set_offline",
			"Mark a Jenkins node temporarily offline so that no new builds start on it (running builds finish), or bring it back online",
			str("node", "Name of the node", mcp.Required()),
			boolean("offline", "true to take the node offline, false to bring it back online", mcp.Required()),
			str("message", "Reason shown to other users while the node is offline (Optional)"),
		),
		destructiveTool("jenkins_job_delete",
			"Delete a Jenkins job or folder with all its builds, logs, artifacts and configuration",
			job,
		),
		destructiveTool("jenkins_build_delete",
			"Delete a Jenkins build with its log and artifacts",
			job,
			str("number", "Build number of the build to delete", mcp.Required()),
		),
	}
}

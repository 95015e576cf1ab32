import Foundation
import SoBasics
import SoWorkspace

/// A workspace's tasks and what they cost together.
struct TaskListJSON: Encodable {
    var workspace: String
    var tasks: [TaskJSON]
    var cost: TaskJSON.Cost
}
